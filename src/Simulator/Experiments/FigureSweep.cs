using System.Globalization;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Reports;

namespace Camdoop.Simulator.Experiments;

/// <summary>The paper's simulator figures this harness reproduces.</summary>
public enum Figure
{
    /// <summary>Figure 6: shuffle and reduce time as S varies from 0 to 1, at R = 1 and R = N.</summary>
    Figure6,

    /// <summary>Figure 7(c, d): time as R varies, at S = 1 and S = 0.</summary>
    Figure7,
}

/// <summary>What a sweep varies and how it runs.</summary>
public sealed record SweepOptions
{
    public long BytesPerServer { get; init; } = 2_000_000;

    public ulong Seed { get; init; } = 1;

    /// <summary>S values of Figure 6 (0 means 1/N). Default 0, 0.2, ..., 1.</summary>
    public IReadOnlyList<double>? OutputRatios { get; init; }

    /// <summary>R values of Figure 7. Default 1, 2, 4, ... up to N (and N itself).</summary>
    public IReadOnlyList<int>? ReduceTasks { get; init; }

    public IReadOnlyList<ShuffleMode> Modes { get; init; } = [ShuffleMode.Camdoop, ShuffleMode.NoAgg];

    /// <summary>Cores to use: simulations run side by side (as many as fit in memory), each on its share; 0 = every core.</summary>
    public int Parallelism { get; init; }

    public CamdoopServiceOptions? Service { get; init; }

    /// <summary>The six disjoint trees every run uses.</summary>
    public TreeFamily Trees { get; init; } = TreeFamily.Shallow;

    public string? DataRoot { get; init; }
}

/// <summary>Where a sweep is: runs done of the total, and the run in progress.</summary>
public readonly record struct SweepProgress(int Done, int Total, string Current);

/// <summary>One point of a sweep: the configuration, the measured time, the switch bounds and what moved.</summary>
public sealed record SweepRow(
    string Figure,
    string Panel,
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
    long Events);

/// <summary>
/// Reproduces Figures 6 and 7 of the paper on a simulated torus (8x8x8 with 2 MB per server by default):
/// Camdoop and Camdoop (no agg.) against the three switch lower bounds. Runs that share an input share its
/// generation and map phase; independent simulations run in parallel, one per core.
/// </summary>
public static class FigureSweep
{
    public static readonly double[] DefaultOutputRatios = [0, 0.2, 0.4, 0.6, 0.8, 1];

    public static IReadOnlyList<SweepRow> Run(Figure figure, Torus torus, SweepOptions? options = null, IProgress<SweepProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(torus);
        options ??= new SweepOptions();
        int n = torus.Count;
        // Groups of runs that share one input: (S, R) -> the modes.
        var groups = new List<(double S, int R, string Panel)>();
        if (figure == Figure.Figure6)
        {
            foreach (double s in options.OutputRatios ?? DefaultOutputRatios)
            {
                groups.Add((s, 1, "R=1"));
                groups.Add((s, n, string.Create(CultureInfo.InvariantCulture, $"R={n}")));
            }
        }
        else
        {
            var rs = options.ReduceTasks ?? DefaultReduceTasks(n);
            foreach (double s in new[] { 1.0, 0.0 })
            {
                foreach (int r in rs)
                {
                    groups.Add((s, r, s == 0 ? "S=0" : "S=1"));
                }
            }
        }
        int total = groups.Count * options.Modes.Count;
        int done = 0;
        var rows = new List<SweepRow>();
        int parallelism = options.Parallelism > 0 ? options.Parallelism : Environment.ProcessorCount;
        long budget = (options.Service ?? new CamdoopServiceOptions()).MemoryBudgetBytes;
        JobSimulationOptions GroupOptions(int g) => new()
        {
            Torus = torus,
            Workload = Workload.Synthetic,
            OutputRatio = groups[g].S,
            BytesPerServer = options.BytesPerServer,
            Seed = options.Seed,
            ReduceTasks = groups[g].R,
            Service = options.Service,
            Trees = options.Trees,
            DataRoot = options.DataRoot,
        };
        byte[][]? raw = null;
        double rawS = double.NaN;
        // The next group's input, when it was mapped while this group's last run was still going (see below).
        Task<JobSimulationInput>? ahead = null;
        try
        {
            for (int g = 0; g < groups.Count; g++)
            {
                var (s, r, panel) = groups[g];
                var baseOptions = GroupOptions(g);
                JobSimulationInput input;
                if (ahead is not null)
                {
                    input = ahead.GetAwaiter().GetResult();
                    ahead = null;
                    FreeLastRuns();
                }
                else
                {
                    // Inputs depend on S only: generate once per S, map once per (S, R), run every mode on the same map outputs.
                    if (rawS != s)
                    {
                        raw = null; // let the previous S's inputs go before generating the next
                    }
                    // The previous group's runs, map outputs and, on a new S, inputs.
                    FreeLastRuns();
                    if (raw is null)
                    {
                        raw = JobSimulationInput.Generate(baseOptions);
                        rawS = s;
                    }
                    input = JobSimulationInput.Prepare(baseOptions, rawInputs: raw);
                }
                using (input)
                {
                    var results = new JobSimulationResult[options.Modes.Count];
                    int fit = RunsThatFitInMemory(torus.Count, r, options.BytesPerServer, budget);
                    int atOnce = Math.Min(parallelism, fit);
                    // Cores not taken by runs side by side go to each run's partitions.
                    int threads = Math.Max(1, parallelism / Math.Min(atOnce, options.Modes.Count));
                    // Runs side by side on one core each rarely end together (at S = 0 and R = 1, Camdoop's run takes a
                    // third of the time of the run without aggregation): when the first ends, the core it leaves maps the
                    // next group's input, if that shares this group's generated input (the same S) and memory holds one
                    // more run of this group (an input is a fraction of a run). Each input is mapped the same either
                    // way, so the rows are too.
                    bool mapAhead = atOnce > 1 && options.Modes.Count > 1 && g + 1 < groups.Count && groups[g + 1].S == s
                        && fit > atOnce;
                    var nextOptions = mapAhead ? GroupOptions(g + 1) : null;
                    var nextRaw = raw;
                    int ended = 0;
                    Parallel.For(0, options.Modes.Count, new ParallelOptions { MaxDegreeOfParallelism = atOnce }, m =>
                    {
                        var mode = options.Modes[m];
                        if (atOnce == 1 && m > 0)
                        {
                            FreeLastRuns(); // runs one at a time: the last one's
                        }
                        results[m] = JobSimulation.Run(baseOptions with { Mode = mode, SimulationThreads = threads }, input);
                        // The first run to end that leaves its core with no run of this group to take up.
                        if (nextOptions is not null && Interlocked.Increment(ref ended) == Math.Max(1, options.Modes.Count - atOnce + 1))
                        {
                            ahead = Task.Run(() => JobSimulationInput.Prepare(nextOptions, rawInputs: nextRaw));
                        }
                        int now = Interlocked.Increment(ref done);
                        progress?.Report(new SweepProgress(now, total, string.Create(CultureInfo.InvariantCulture,
                            $"{figure} {panel} S={s:0.##} R={r} {ModeName(mode)}: {results[m].ShuffleReduceSeconds:0.####} s")));
                    });
                    for (int m = 0; m < results.Length; m++)
                    {
                        var res = results[m];
                        rows.Add(new SweepRow(figure.ToString(), panel, s, res.OutputRatio, r, res.Mode, res.Trees, res.ShuffleReduceSeconds, res.LowerBounds,
                            res.IntermediateBytes, res.OutputBytes, res.DataByteHops, res.LinkBytes, res.AggregatedBytes, res.Completed,
                            res.SimulationWallSeconds, res.SimulationCpuSeconds, res.Events));
                    }
                }
            }
        }
        finally
        {
            // A run failed while the next input was being mapped: let that finish and free it.
            if (ahead is not null)
            {
                try
                {
                    ahead.GetAwaiter().GetResult().Dispose();
                }
                catch (Exception)
                {
                    // The run's failure is the one to report.
                }
            }
        }
        return rows;
    }

    /// <summary>
    /// Frees what the last runs left (~14 GB after an R = 512 run) before the next one grows: otherwise its growth on
    /// top was OOM-killed on a 24 GB machine, or, with budgets sized for throughput (the CLI turns DATAS off), the
    /// heap grew over the garbage to 23 GB. Compacting, not aggressive: the heap keeps the freed memory committed
    /// (RetainVM in the CLI) for the next run, where an aggressive collection gave it back to the system and the next
    /// R = 512 run faulted its ~14 GB in again, 40 % more simulation time (README, 2026-11-26).
    /// </summary>
    private static void FreeLastRuns() => GC.Collect(GC.MaxGeneration, GCCollectionMode.Forced, blocking: true, compacting: true);

    /// <summary>
    /// How many simulations of this size run side by side without exhausting memory. A run holds three copies of its
    /// input (raw, map output, in flight) and, per server, its vertices' buffers: about 48 KB per vertex (R x 6 of
    /// them; measured on 4x4x4 at R = 64) up to about three times the server's buffer budget (receive windows,
    /// send buffers, mergers). Two runs at R = 512 on 8x8x8 side by side exceeded 24 GB and were OOM-killed.
    /// </summary>
    public static int RunsThatFitInMemory(int servers, int reduceTasks, long bytesPerServer, long bufferBudgetPerServer)
    {
        const long BytesPerVertex = 48 * 1024;
        long perServer = Math.Min((long)reduceTasks * Camdoop.MapReduce.Trees.TreeTopology.TreeCount * BytesPerVertex, 3 * bufferBudgetPerServer);
        long perRun = servers * (perServer + 3 * bytesPerServer);
        long available = GC.GetGCMemoryInfo().TotalAvailableMemoryBytes;
        return (int)Math.Clamp(available * 8 / 10 / Math.Max(1, perRun), 1, int.MaxValue);
    }

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
        var table = new CsvTable("figure", "panel", "requestedS", "outputRatio", "reduceTasks", "mode", "trees", "shuffleReduceSeconds",
            "switch1G", "switch6G", "switch1GOversub", "intermediateBytes", "outputBytes", "dataByteHops", "linkBytes",
            "aggregatedMin", "aggregatedMedian", "aggregatedMax", "completed", "simulationWallSeconds", "simulationCpuSeconds", "events");
        foreach (var r in rows)
        {
            table.Add(r.Figure, r.Panel, r.RequestedOutputRatio, r.OutputRatio, r.ReduceTasks, r.Mode, r.Trees, r.ShuffleReduceSeconds,
                r.LowerBounds.Switch1G, r.LowerBounds.Switch6G, r.LowerBounds.Switch1GOversubscribed, r.IntermediateBytes, r.OutputBytes,
                r.DataByteHops, r.LinkBytes, r.AggregatedBytes.Min, r.AggregatedBytes.Median, r.AggregatedBytes.Max, r.Completed,
                r.SimulationWallSeconds, r.SimulationCpuSeconds, r.Events);
        }
        return table;
    }

    public static void WriteCsv(IEnumerable<SweepRow> rows, string path) => ToCsv(rows).Save(path);

    /// <summary>One chart per panel (log-scale time), like the paper's: the two Camdoop series and the three bounds.</summary>
    public static IReadOnlyList<SvgLineChart> Charts(IEnumerable<SweepRow> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var charts = new List<SvgLineChart>();
        foreach (var panel in rows.GroupBy(r => (r.Figure, r.Panel)))
        {
            bool byS = panel.Key.Figure == nameof(Figure.Figure6);
            double X(SweepRow r) => byS ? r.RequestedOutputRatio : Math.Log2(r.ReduceTasks);
            var chart = new SvgLineChart
            {
                Title = $"{(byS ? "Figure 6" : "Figure 7")}: {panel.Key.Panel}",
                XLabel = byS ? "output ratio S" : "number of reduce tasks R (log scale)",
                XTickFormat = byS ? null : x => Math.Round(Math.Pow(2, x)).ToString(CultureInfo.InvariantCulture),
                YLabel = "shuffle and reduce time (s)",
            };
            foreach (var mode in panel.Select(r => r.Mode).Distinct())
            {
                chart.Series.Add(new ChartSeries(ModeName(mode), panel.Where(r => r.Mode == mode).OrderBy(X).Select(r => (X(r), r.ShuffleReduceSeconds)).ToList()));
            }
            // The bounds depend on the data only (one point per x, whatever the mode).
            var points = panel.GroupBy(X).OrderBy(g => g.Key).Select(g => (X: g.Key, Bounds: g.First().LowerBounds)).ToList();
            chart.Series.Add(new ChartSeries("Switch (1 Gbps)", points.Select(p => (p.X, p.Bounds.Switch1G)).ToList(), Dashed: true));
            chart.Series.Add(new ChartSeries("Switch (6 Gbps)", points.Select(p => (p.X, p.Bounds.Switch6G)).ToList(), Dashed: true));
            chart.Series.Add(new ChartSeries("Switch (1 Gbps, 1:4 oversub)", points.Select(p => (p.X, p.Bounds.Switch1GOversubscribed)).ToList(), Dashed: true));
            charts.Add(chart);
        }
        return charts;
    }

    /// <summary>Writes one SVG per panel into <paramref name="directory"/>; returns the paths.</summary>
    public static IReadOnlyList<string> WriteCharts(IEnumerable<SweepRow> rows, string directory, string prefix = "")
    {
        Directory.CreateDirectory(directory);
        var paths = new List<string>();
        foreach (var chart in Charts(rows))
        {
            string name = prefix + chart.Title.Replace(": ", "-", StringComparison.Ordinal).Replace(' ', '-').Replace('=', '-').ToLowerInvariant() + ".svg";
            string path = Path.Combine(directory, name);
            chart.Save(path);
            paths.Add(path);
        }
        return paths;
    }

    public static string ModeName(ShuffleMode mode) => mode == ShuffleMode.Camdoop ? "Camdoop" : "Camdoop (no agg.)";

    private static string ModeName(string mode) => mode == "camdoop" ? "Camdoop" : "Camdoop (no agg.)";
}
