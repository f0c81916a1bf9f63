using System.Globalization;
using Camdoop.Experiments.Reports;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.DirectShuffle.Plans;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Energy;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>The paper's simulator figures this harness reproduces.</summary>
public enum Figure
{
    /// <summary>Figure 6: shuffle and reduce time as S varies from 0 to 1, at R = 1 and R = N.</summary>
    Figure6,

    /// <summary>Figure 7(c, d): time as R varies, at S = 1 and S = 0.</summary>
    Figure7,

    /// <summary>Figure 10: small inputs (20 KB and 200 KB per server by default) at S = 0 and R = 1.</summary>
    Figure10,
}

/// <summary>What a sweep varies and how it runs.</summary>
public sealed record SweepOptions
{
    /// <summary>
    /// What every run shares: input per server (Figure 10 takes <see cref="InputSizes"/> instead), seed, servers, trees,
    /// compute and energy models, data root. The figures do not check outputs: <see cref="SimulationSettings.Verify"/> is not used.
    /// </summary>
    public SimulationSettings Settings { get; init; } = new();

    /// <summary>Figure 10's input sizes per server (default <see cref="FigureSweep.DefaultSmallInputs"/>); other figures use the settings' bytes per server.</summary>
    public IReadOnlyList<long>? InputSizes { get; init; }

    /// <summary>S values of Figure 6 (0 means 1/N). Default 0, 0.2, ..., 1.</summary>
    public IReadOnlyList<double>? OutputRatios { get; init; }

    /// <summary>
    /// R values: Figure 7's points (default 1, 2, 4, ... up to N, and N itself), or Figure 6's panels (default 1 and N).
    /// </summary>
    public IReadOnlyList<int>? ReduceTasks { get; init; }

    /// <summary>The Camdoop modes run on the torus (when <see cref="Networks"/> has it).</summary>
    public IReadOnlyList<ShuffleMode> Modes { get; init; } = [ShuffleMode.Camdoop, ShuffleMode.NoAgg];

    /// <summary>
    /// The networks every point runs on: the torus runs <see cref="Modes"/>, each switched network TCP Camdoop
    /// (<see cref="ShuffleMode.Tcp"/>) with <see cref="SwitchedNetwork"/>'s queues and NICs.
    /// </summary>
    public IReadOnlyList<NetworkKind> Networks { get; init; } = [NetworkKind.Torus];

    /// <summary>The switched networks' queues and NICs (its kind is each of <see cref="Networks"/> in turn).</summary>
    public SwitchedNetworkOptions SwitchedNetwork { get; init; } = new();

    /// <summary>Free ports cabled per server on GRIN (<see cref="GrinTopology"/>): one run of each.</summary>
    public IReadOnlyList<int> GrinFreePorts { get; init; } = [1];

    /// <summary>TCP Camdoop's transport: TCP, each stream's send buffer, streams at once per server.</summary>
    public TcpOptions Tcp { get; init; } = new();

    public int TcpSendBufferBytes { get; init; } = 128 * 1024;

    public DirectShuffleOptions? Direct { get; init; }

    /// <summary>How TCP Camdoop's servers aggregate on the way to the reducer: each switched network runs once per entry.</summary>
    public IReadOnlyList<Aggregation> Aggregations { get; init; } = [Aggregation.Direct];

    /// <summary>Every run of one point: each mode on the torus, then TCP Camdoop on each switched network with each aggregation.</summary>
    internal IReadOnlyList<(ShuffleMode Mode, SwitchedNetworkOptions? Network, Aggregation Aggregation)> Runs =>
    [
        .. Networks.Any(n => n.Topology().HasTorusLinks) ? Modes.Select(m => (m, (SwitchedNetworkOptions?)null, Aggregation.Direct)) : [],
        .. Networks.Where(n => !n.Topology().HasTorusLinks).Distinct().SelectMany(n =>
            (n.Topology().CablesFreePorts ? GrinFreePorts : [0]).SelectMany(f =>
                // NetAgg's boxes are its aggregation: it runs once, on its own plan.
                (n.Topology().HasAggBoxes ? [Aggregation.Direct] : Aggregations.Distinct()).Select(a =>
                    (ShuffleMode.Tcp, (SwitchedNetworkOptions?)(SwitchedNetwork with { Kind = n, FreePorts = f }), a)))),
    ];

    /// <summary>Cores to use: simulations run side by side (as many as fit in memory), each on its share; 0 = every core.</summary>
    public int Parallelism { get; init; }
}

/// <summary>Where a sweep is: runs done of the total, and the run in progress.</summary>
public readonly record struct SweepProgress(int Done, int Total, string Current);

/// <summary>One point of a sweep: the configuration, the measured time, the switch bounds and what moved.</summary>
public sealed record SweepRow(
    string Figure,
    string Panel,
    long BytesPerServer,
    double RequestedOutputRatio,
    double OutputRatio,
    int ReduceTasks,
    string Mode,
    string Trees,
    double ShuffleReduceSeconds,
    LowerBounds LowerBounds,
    long IntermediateBytes,
    long OutputBytes,
    long DataByteHops,
    long LinkBytes,
    Distribution AggregatedBytes,
    bool Completed,
    double SimulationWallSeconds,
    double SimulationCpuSeconds,
    long Events,
    string Network = "torus",
    NetworkEnergy? Energy = null,
    string? Aggregation = null,
    long CoreLinkBytes = 0);

/// <summary>
/// Reproduces Figures 6, 7 and 10 of the paper on a simulated torus (8x8x8 with 2 MB per server by default):
/// Camdoop and Camdoop (no agg.) against the three switch lower bounds. Runs that share an input share its
/// generation and map phase; independent simulations run in parallel, one per core.
/// </summary>
public static partial class FigureSweep
{
    public static readonly double[] DefaultOutputRatios = [0, 0.2, 0.4, 0.6, 0.8, 1];

    /// <summary>Figure 10's input per server: the paper's 20 KB and 200 KB.</summary>
    public static readonly long[] DefaultSmallInputs = [20 << 10, 200 << 10];

    /// <summary>
    /// Frees what the last runs left (~14 GB after an R = 512 run) before the next one grows: otherwise its growth on
    /// top was OOM-killed on a 24 GB machine, or, with budgets sized for throughput (the CLI turns DATAS off), the
    /// heap grew over the garbage to 23 GB. Compacting, not aggressive: the heap keeps the freed memory committed
    /// (RetainVM in the CLI) for the next run, where an aggressive collection gave it back to the system and the next
    /// R = 512 run faulted its ~14 GB in again, 40 % more simulation time.
    /// </summary>
    private static void FreeLastRuns() => GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: true, compacting: true);

    /// <summary>
    /// How many simulations of one group run side by side without exhausting memory, by <see cref="JobMemoryEstimate"/>:
    /// the sweep holds the raw input of the group's S, the group's map outputs (shared by its runs) and possibly the
    /// next group's (mapped ahead), and each run adds its own shuffle buffers and vertices. Two runs at R = 512 on
    /// 8x8x8 side by side exceeded 24 GB and were OOM-killed; the estimate gives one there (11 GB each after 6 GB held).
    /// </summary>
    public static int RunsThatFitInMemory(int servers, int reduceTasks, long bytesPerServer, long bufferBudgetPerServer)
    {
        long held = (servers * bytesPerServer) + (2 * JobMemoryEstimate.InputBytes(servers, bytesPerServer, mapOutputOnDisk: false));
        long perRun = JobMemoryEstimate.ShuffleBytes(servers, reduceTasks, bufferBudgetPerServer);
        long available = GC.GetGCMemoryInfo().TotalAvailableMemoryBytes / 10 * 8;
        return JobMemoryEstimate.RunsThatFit(available, held, perRun);
    }

    /// <summary>Largest R whose runs go side by side (<see cref="RunsSideBySide"/>).</summary>
    public const int MaxReduceTasksSideBySide = 32;

    /// <summary>
    /// How many runs of one group go side by side, one core each, rather than one after the other on every core: as
    /// many as fit in memory up to R = <see cref="MaxReduceTasksSideBySide"/>, else one. A run's second thread buys
    /// more as R grows (8x8x8, S=0 without aggregation: 1.6x at R=1, 2.15x at R=64, 51.0 -> 23.7 s), and
    /// runs side by side last as long as the slower one, whose neighbour's core idles once the faster ends: at R=64
    /// the pair took 43.4 s side by side against 23.0 s one after the other. R = 32 is where the sweeps always put
    /// the boundary (by an older memory model).
    /// </summary>
    public static int RunsSideBySide(int servers, int reduceTasks, long bytesPerServer, long bufferBudgetPerServer) =>
        reduceTasks <= MaxReduceTasksSideBySide ? RunsThatFitInMemory(servers, reduceTasks, bytesPerServer, bufferBudgetPerServer) : 1;

    /// <summary>1, 2, 4, ... below N, then N.</summary>
    public static IReadOnlyList<int> DefaultReduceTasks(int servers)
    {
        var rs = new List<int>();
        for (int r = 1; r < servers; r *= 2)
        {
            rs.Add(r);
        }
        rs.Add(servers);
        return rs;
    }

    public static CsvTable ToCsv(IEnumerable<SweepRow> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        // With energy measured (the settings' energy model), each run's network energy follows its other columns.
        bool energy = rows.Any(r => r.Energy is not null);
        // With TCP Camdoop runs that aggregate on the way, how each run's servers aggregated and what crossed the
        // links between switches follow (a sweep of the direct shuffle alone keeps its columns).
        bool streams = rows.Any(r => r.Aggregation is not null and not "direct");
        string[] header = ["figure", "panel", "requestedS", "outputRatio", "reduceTasks", "mode", "trees", "shuffleReduceSeconds",
            "switch1G", "switch6G", "switch1GOversub", "intermediateBytes", "outputBytes", "dataByteHops", "linkBytes",
            "aggregatedMin", "aggregatedMedian", "aggregatedMax", "completed", "simulationWallSeconds", "simulationCpuSeconds", "events",
            "bytesPerServer", "network"];
        string[] energyHeader = ["energyModel", "energyJoules", "energyTorusJoules", "energyNicJoules", "energySwitchJoules",
            "energyLegacyJoules", "lowPowerShare", "wakes"];
        string[] streamHeader = ["aggregation", "coreLinkBytes"];
        var table = new CsvTable([.. header, .. energy ? energyHeader : [], .. streams ? streamHeader : []]);
        foreach (var r in rows)
        {
            object[] values = [r.Figure, r.Panel, r.RequestedOutputRatio, r.OutputRatio, r.ReduceTasks, r.Mode, r.Trees, r.ShuffleReduceSeconds,
                r.LowerBounds.Switch1G, r.LowerBounds.Switch6G, r.LowerBounds.Switch1GOversubscribed, r.IntermediateBytes, r.OutputBytes,
                r.DataByteHops, r.LinkBytes, r.AggregatedBytes.Min, r.AggregatedBytes.Median, r.AggregatedBytes.Max, r.Completed,
                r.SimulationWallSeconds, r.SimulationCpuSeconds, r.Events, r.BytesPerServer, r.Network];
            var e = r.Energy;
            object[] energyValues = energy
                ? [e?.Model ?? "", e?.Joules ?? 0, e?.ByKind.TorusLinks ?? 0, e?.ByKind.ServerNics ?? 0, e?.ByKind.SwitchPorts ?? 0,
                    e?.LegacyJoules ?? 0, e?.LowPowerShare ?? 0, e?.Wakes ?? 0]
                : [];
            object[] streamValues = streams ? [r.Aggregation ?? "", r.CoreLinkBytes] : [];
            table.Add([.. values, .. energyValues, .. streamValues]);
        }
        return table;
    }

    public static void WriteCsv(IEnumerable<SweepRow> rows, string path) => ToCsv(rows).Save(path);

    /// <summary>
    /// One chart per panel (log-scale time), like the paper's: the two Camdoop series and the three bounds. Titles name
    /// the paper's figure (<see cref="FigureName"/>), the panel, the cube (<paramref name="torus"/>, when given) and the
    /// sweep's <paramref name="variant"/> (e.g. its networks, deep buffers or compute model), when it has one.
    /// </summary>
    public static IReadOnlyList<LineChart> Charts(IEnumerable<SweepRow> rows, Torus? torus = null, string? variant = null) =>
        [.. TimeCharts(rows, torus, variant).Select(c => c.Chart)];

    /// <summary>The paper's figure a sweep reproduces: Figure 6's sweep on the testbed's 27 servers is its Figure 5.</summary>
    public static string FigureName(string figure, Torus? torus) => figure switch
    {
        nameof(Figure.Figure6) => torus?.Count == 27 ? "Figure 5" : "Figure 6",
        nameof(Figure.Figure7) => "Figure 7",
        nameof(Figure.Figure10) => "Figure 10",
        _ => figure,
    };

    /// <summary>"(3x3x3)" or "(4x4x4, torus/switch/racks)": the cube and the variant, for a title's end.</summary>
    public static string TitleNote(Torus? torus, string? variant)
    {
        string[] parts = [.. new[] { torus?.ToString(), variant }.Where(p => !string.IsNullOrEmpty(p)).Select(p => p!)];
        return parts.Length == 0 ? "" : " (" + string.Join(", ", parts) + ")";
    }

    private static IEnumerable<(LineChart Chart, string File)> TimeCharts(IEnumerable<SweepRow> rows, Torus? torus, string? variant)
    {
        ArgumentNullException.ThrowIfNull(rows);
        foreach (var panel in rows.GroupBy(r => (r.Figure, r.Panel)))
        {
            bool byS = panel.Key.Figure == nameof(Figure.Figure6);
            bool bySize = panel.Key.Figure == nameof(Figure.Figure10);
            double X(SweepRow r) => byS ? r.RequestedOutputRatio : bySize ? Math.Log10(r.BytesPerServer / 1024.0) : Math.Log2(r.ReduceTasks);
            var chart = new LineChart
            {
                Title = $"{FigureName(panel.Key.Figure, torus)}: {panel.Key.Panel}{TitleNote(torus, variant)}",
                XLabel = byS ? "output ratio S" : bySize ? "input per server (KB, log scale)" : "number of reduce tasks R (log scale)",
                XTickFormat = byS ? null
                    : bySize ? x => Math.Round(Math.Pow(10, x)).ToString(CultureInfo.InvariantCulture) + " KB"
                    : x => Math.Round(Math.Pow(2, x)).ToString(CultureInfo.InvariantCulture),
                YLabel = "shuffle and reduce time (s)",
            };
            foreach (var (mode, network, aggregation) in panel.Select(r => (r.Mode, r.Network, r.Aggregation)).Distinct())
            {
                chart.Series.Add(new ChartSeries(SeriesName(mode, network, aggregation),
                    panel.Where(r => r.Mode == mode && r.Network == network && r.Aggregation == aggregation).OrderBy(X).Select(r => (X(r), r.ShuffleReduceSeconds)).ToList()));
            }
            // The bounds depend on the data only (one point per x, whatever the mode).
            var points = panel.GroupBy(X).OrderBy(g => g.Key).Select(g => (X: g.Key, Bounds: g.First().LowerBounds)).ToList();
            chart.Series.Add(new ChartSeries("Switch (1 Gbps)", points.Select(p => (p.X, p.Bounds.Switch1G)).ToList(), Dashed: true));
            chart.Series.Add(new ChartSeries("Switch (6 Gbps)", points.Select(p => (p.X, p.Bounds.Switch6G)).ToList(), Dashed: true));
            chart.Series.Add(new ChartSeries("Switch (1 Gbps, 1:4 oversub)", points.Select(p => (p.X, p.Bounds.Switch1GOversubscribed)).ToList(), Dashed: true));
            yield return (chart, FileName(panel.Key.Figure, panel.Key.Panel, energy: false));
        }
    }

    /// <summary>
    /// With energy measured, one more chart per panel: each mode's network energy for the job, and what legacy
    /// Ethernet would have drawn over the same time (dashed) when there are few enough series to read it: beyond
    /// four designs the legacy lines are left to the CSV.
    /// </summary>
    public static IReadOnlyList<LineChart> EnergyCharts(IEnumerable<SweepRow> rows, Torus? torus = null, string? variant = null) =>
        [.. EnergyPanels(rows, torus, variant).Select(c => c.Chart)];

    private static IEnumerable<(LineChart Chart, string File)> EnergyPanels(IEnumerable<SweepRow> rows, Torus? torus, string? variant)
    {
        ArgumentNullException.ThrowIfNull(rows);
        foreach (var panel in rows.Where(r => r.Energy is not null).GroupBy(r => (r.Figure, r.Panel)))
        {
            bool byS = panel.Key.Figure == nameof(Figure.Figure6);
            bool bySize = panel.Key.Figure == nameof(Figure.Figure10);
            double X(SweepRow r) => byS ? r.RequestedOutputRatio : bySize ? Math.Log10(r.BytesPerServer / 1024.0) : Math.Log2(r.ReduceTasks);
            string model = panel.First().Energy!.Model;
            var chart = new LineChart
            {
                Title = $"{FigureName(panel.Key.Figure, torus)} energy: {panel.Key.Panel}{TitleNote(torus, variant)}",
                XLabel = byS ? "output ratio S" : bySize ? "input per server (KB, log scale)" : "number of reduce tasks R (log scale)",
                XTickFormat = byS ? null
                    : bySize ? x => Math.Round(Math.Pow(10, x)).ToString(CultureInfo.InvariantCulture) + " KB"
                    : x => Math.Round(Math.Pow(2, x)).ToString(CultureInfo.InvariantCulture),
                YLabel = $"network energy for the job (J, {model})",
            };
            var designs = panel.Select(r => (r.Mode, r.Network, r.Aggregation)).Distinct().ToList();
            foreach (var (mode, network, aggregation) in designs)
            {
                var runs = panel.Where(r => r.Mode == mode && r.Network == network && r.Aggregation == aggregation).OrderBy(X).ToList();
                string name = SeriesName(mode, network, aggregation);
                chart.Series.Add(new ChartSeries($"{name} ({model})", runs.Select(r => (X(r), r.Energy!.Joules)).ToList()));
                if (designs.Count <= 4)
                {
                    chart.Series.Add(new ChartSeries($"{name}, legacy", runs.Select(r => (X(r), r.Energy!.LegacyJoules)).ToList(), Dashed: true));
                }
            }
            yield return (chart, FileName(panel.Key.Figure, panel.Key.Panel, energy: true));
        }
    }

    /// <summary>A chart's file: the sweep's figure and the panel, e.g. figure-6-r-1.svg, figure-10-energy-s-0-r-1.svg.</summary>
    public static string FileName(string figure, string panel, bool energy)
    {
        ArgumentNullException.ThrowIfNull(figure);
        ArgumentNullException.ThrowIfNull(panel);
        string number = figure.StartsWith("Figure", StringComparison.Ordinal) ? figure["Figure".Length..] : figure;
        string slug = panel.Replace(",", "", StringComparison.Ordinal).Replace(' ', '-').Replace('=', '-').ToLowerInvariant();
        return $"figure-{number}{(energy ? "-energy" : "")}-{slug}.svg";
    }

    /// <summary>
    /// Writes one chart per panel (SVG and PNG) into <paramref name="directory"/> (and one of energy, when measured), titled with the
    /// cube and the variant (<see cref="Charts"/>); returns the paths.
    /// </summary>
    public static IReadOnlyList<string> WriteCharts(IEnumerable<SweepRow> rows, string directory, string prefix = "", Torus? torus = null, string? variant = null)
    {
        Directory.CreateDirectory(directory);
        var paths = new List<string>();
        foreach (var (chart, file) in TimeCharts(rows, torus, variant).Concat(EnergyPanels(rows, torus, variant)))
        {
            string path = Path.Combine(directory, prefix + file);
            paths.AddRange(chart.Save(path));
        }
        return paths;
    }

    /// <summary>
    /// The rows of a CSV that <see cref="ToCsv"/> wrote, for drawing its charts again: every column the CSV has comes
    /// back; a run's energy keeps its model, joules, split by kind, low-power share and wakes, and its legacy joules
    /// (as one port at 1 W over that many seconds). A CSV from before the columns <c>bytesPerServer</c> and
    /// <c>network</c> reads as 0 bytes (Figure 10's charts need the column) and the torus.
    /// </summary>
    public static IReadOnlyList<SweepRow> ReadCsv(string path)
    {
        var (header, records) = CsvTable.Read(path);
        int Col(string name) => header.IndexOf(name) is var i and >= 0 ? i : throw new FormatException($"{path}: no column '{name}'");
        int? Opt(string name) => header.IndexOf(name) is var i and >= 0 ? i : null;
        double D(string[] r, string name) => double.Parse(r[Col(name)], NumberStyles.Float, CultureInfo.InvariantCulture);
        long L(string[] r, string name) => long.Parse(r[Col(name)], NumberStyles.Integer, CultureInfo.InvariantCulture);
        var rows = new List<SweepRow>();
        foreach (var r in records)
        {
            NetworkEnergy? energy = Opt("energyModel") is { } m && r[m].Length > 0
                ? new NetworkEnergy(r[m], D(r, "energyJoules"),
                    new EnergyByLinkKind(D(r, "energyTorusJoules"), D(r, "energyNicJoules"), D(r, "energySwitchJoules")),
                    Seconds: D(r, "energyLegacyJoules"), Ports: 1, WattsPerPort: 1, D(r, "lowPowerShare"), L(r, "wakes"))
                : null;
            string? aggregation = Opt("aggregation") is { } a && r[a].Length > 0 ? r[a] : null;
            long bytesPerServer = Opt("bytesPerServer") is { } b ? long.Parse(r[b], NumberStyles.Integer, CultureInfo.InvariantCulture) : 0;
            rows.Add(new SweepRow(r[Col("figure")], r[Col("panel")], bytesPerServer, D(r, "requestedS"), D(r, "outputRatio"),
                (int)L(r, "reduceTasks"), r[Col("mode")], r[Col("trees")], D(r, "shuffleReduceSeconds"),
                new LowerBounds(D(r, "switch1G"), D(r, "switch6G"), D(r, "switch1GOversub")), L(r, "intermediateBytes"), L(r, "outputBytes"),
                L(r, "dataByteHops"), L(r, "linkBytes"), new Distribution(L(r, "aggregatedMin"), L(r, "aggregatedMedian"), L(r, "aggregatedMax")),
                bool.Parse(r[Col("completed")]), D(r, "simulationWallSeconds"), D(r, "simulationCpuSeconds"), L(r, "events"),
                Opt("network") is { } n ? r[n] : "torus", energy, aggregation, Opt("coreLinkBytes") is { } c ? long.Parse(r[c], NumberStyles.Integer, CultureInfo.InvariantCulture) : 0));
        }
        return rows;
    }

    public static string ModeName(ShuffleMode mode) => mode switch
    {
        ShuffleMode.Camdoop => "Camdoop",
        ShuffleMode.NoAgg => "Camdoop (no agg.)",
        _ => "TCP Camdoop",
    };

    /// <summary>A run's name in charts: its mode, and for TCP Camdoop the network it crossed and how its servers aggregated.</summary>
    public static string SeriesName(string mode, string network, string? aggregation = null) => mode switch
    {
        "camdoop" => "Camdoop",
        "noagg" => "Camdoop (no agg.)",
        _ when NetworkKinds.OfLabel(network)?.HasAggBoxes == true || aggregation == "netagg" => "NetAgg",
        _ when aggregation is null or "direct" => $"TCP Camdoop ({network})",
        _ => $"TCP Camdoop ({network}, {aggregation})",
    };
}
