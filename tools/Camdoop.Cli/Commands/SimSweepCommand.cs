using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Experiments;
using Camdoop.MapReduce.Trees;
using Camdoop.Simulator.Network;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop sim sweep`: reproduces the paper's Figures 6, 7, 8, 9 and 10 and Table 1 in simulation, as CSV plus SVG charts (Markdown for the table).</summary>
public static class SimSweepCommand
{
    private static readonly Dictionary<string, Figure> Figures = new(StringComparer.Ordinal)
    {
        ["6"] = Figure.Figure6,
        ["7"] = Figure.Figure7,
        ["10"] = Figure.Figure10,
    };

    public static Command Create() =>
        new Command("sweep", "Reproduce paper Figure 6 (vary S), 7 (vary R), 8 (jobs at once), 9 (failures), 10 (small inputs) or Table 1 (Sort, WordCount): CSV and SVG.")
        {
            Details = "Figures 6, 7 and 10 run Camdoop and Camdoop (no agg.) on the synthetic job at every point, next to the three\n" +
                      "switch lower bounds, one simulation per core at a time. '--figure 6 --torus 3x3x3' is the testbed-sized\n" +
                      "counterpart of Figure 5; '--figure 6 --reducers 1,100' draws Figure 6's panels at other R, for cubes whose\n" +
                      "R=N run does not fit in memory. Map output stays in memory here (map costs no simulated time either way).\n" +
                      "Figure 10 runs S=0, R=1 at each of --input-sizes per server. '--figure table1' runs Sort and WordCount at\n" +
                      "R=1 and R=N in both modes, checks every output against the single-process reference and writes a CSV and a\n" +
                      "Markdown table beside the paper's (--input-per-server is then the input of each job per server).\n" +
                      "Figure 9 fails one server during the shuffle of the S=1 job (at R=1 the root, a neighbour of it and a random\n" +
                      "server; at R=N a random one) at each of --fractions of the failure-free time T, and reports the stretch over\n" +
                      "T. Servers take tens of milliseconds to detect a failure by its missing beacons: on a small cube give a\n" +
                      "larger --input-per-server (3x3x3: 40MB) so that T is long against that, as on the paper's testbed.\n" +
                      "Figure 8 starts --jobs copies of the S=1 job at once, each with its own data: horizontally partitioned\n" +
                      "(every server maps every copy) at R=1 and R=N, and vertically (each copy on N/K servers of its own, chosen\n" +
                      "from the seed) at R=1 and R=N/K per copy; each copy's time is normalised to the same copy alone on the same\n" +
                      "servers. Work costs no simulated time unless --compute prices it: with --compute paper a reducer limits a\n" +
                      "job as on the paper's testbed (its reduce path at 3.15 Gbit/s).\n" +
                      "Figures 6, 7 and 10 with --networks torus,switch,racks also run TCP Camdoop (every map output straight to\n" +
                      "its reducer over TCP) on each switched network listed, on the same map outputs, beside the bounds;\n" +
                      "with --aggregation direct,rack,binary,chain once per aggregation among the servers.\n" +
                      "'--figure netagg' runs the NetAgg paper's workload (flows of Pareto sizes, all at once, --aggregatable of\n" +
                      "them in partition/aggregate requests at output ratio --alpha, the rest background flows) under rack,\n" +
                      "binary, chain and NetAgg on the racks network, --trials draws of it, and reports the paper's metric: the\n" +
                      "99th-percentile flow completion time, against rack's.\n" +
                      "Chart titles name the paper's figure, the cube and what the sweep varied beyond the paper (networks,\n" +
                      "switch buffers, compute model). --chart-only runs nothing and draws the charts again from the CSV in --out.",
        }
            .Option("figure", "6, 7, 8, 9, 10, table1, or netagg (the NetAgg paper's workload and metric)", "N", "6")
            .Option("torus", "Torus size", "XxYxZ", "8x8x8")
            .Option("input-per-server", "Generated input per server", "SIZE", "2MB")
            .Option("fractions", "Figure 9: failure times as fractions of T, comma-separated", "LIST", "0.25,0.5,0.75")
            .Flag("verify", "Figures 8 and 9: check every run's output against the single-process reference")
            .Option("jobs", "Figure 8: copies of the job that run at once", "K", "2")
            .Option("trials", "netagg: draws of the workload, each run under every design", "N", "5")
            .Option("edge-load", "netagg: share of the servers whose edge link carries a flow", "FRACTION", "0.15")
            .Option("aggregatable", "netagg: share of the flows that belong to aggregatable requests", "FRACTION", "0.46")
            .Option("alpha", "netagg: a request's output over its input", "FRACTION", "0.1")
            .Flag("replicated-output", "Figure 9: at R=1 also fail the root of the job whose reducer replicates its output (row root-replicated)")
            .Option("output-ratios", "Figure 6: S values, comma-separated", "LIST", "0,0.2,0.4,0.6,0.8,1")
            .Option("input-sizes", "Figure 10: input per server, comma-separated", "LIST", "20KB,200KB")
            .Option("reducers", "R values, comma-separated: Figure 7's points (default 1,2,4,...,N), Figure 6's panels (default 1,N)", "LIST")
            .Option("parallel", "Cores to use (runs side by side as memory allows, each on its share); 0 = all", "N", "0")
            .Option("seed", "Random seed", "N", "1")
            .Option("max-window", CommonOptions.MaxWindowHelp, "SIZE", "128KB")
            .Option("trees", CommonOptions.TreesHelp, "FAMILY", "shallow")
            .Option("compute", CommonOptions.ComputeHelp, "MODE", "off")
            .Option("frame-cost", CommonOptions.FrameCostHelp, "DURATION")
            .Option("compute-rates", CommonOptions.ComputeRatesHelp, "FILE")
            .Option("energy", "Figures 6, 7 and 10: also chart and tabulate every run's network energy. " + CommonOptions.EnergyHelp, "MODEL")
            .Option("networks", "Figures 6, 7 and 10: torus (the Camdoop modes) and switched networks (switch, racks, fattree, netagg, grin: TCP Camdoop, NetAgg), comma-separated", "LIST", "torus")
            .AddSwitchedNetworkOptions(network: false)
            .AddAggregationOption(list: true)
            .Option("out", "Directory for the CSV and SVG files (default sweeps/figure<N>-<torus>)", "DIR")
            .Flag("chart-only", "Run nothing: draw the charts (SVG and PNG) again from the CSV already in --out (give the flags the sweep ran with: the titles name its cube and variant)")
            .Flag("force", "Run even when the largest run's estimated memory exceeds what this machine has available")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        if (args.Required("figure") == "netagg")
        {
            return SimNetAggSweep.Run(args);
        }
        if (args.Flag("chart-only") && args.Required("figure") == "table1")
        {
            throw CliException.Usage("sim sweep: --chart-only draws figures 6 to 10 (Table 1 has no chart)");
        }
        if (args.Has("energy") && args.Required("figure") is "8" or "9" or "table1")
        {
            throw CliException.Usage("sim sweep: --energy charts figures 6, 7 and 10 only");
        }
        var networks = Networks(args);
        if (args.Required("figure") is "8" or "9" or "table1")
        {
            if (networks.Any(n => !n.Topology().HasTorusLinks))
            {
                throw CliException.Usage("sim sweep: --networks other than torus are for figures 6, 7 and 10");
            }
            // Their runs are on the torus only: a switch or TCP flag would be ignored.
            SwitchedNetworkFlags.Network(args, NetworkKind.Torus);
            SwitchedNetworkFlags.Tcp(args, usesTcp: false);
            AggregationFlag.Parse(args, usesTcp: false);
        }
        if (args.Required("figure") == "9")
        {
            return RunFigure9(args);
        }
        if (args.Required("figure") == "table1")
        {
            return RunTable1(args);
        }
        if (args.Required("figure") == "8")
        {
            return RunFigure8(args);
        }
        var figure = args.Choice("figure", Figures);
        var torus = CommonOptions.Torus(args);
        var options = new SweepOptions
        {
            Settings = Settings(args),
            OutputRatios = ParseList(args, "output-ratios", s => double.Parse(s, NumberStyles.Float, CultureInfo.InvariantCulture), v => v is >= 0 and <= 1),
            InputSizes = ParseList(args, "input-sizes", ParseSize, v => v >= 1).Distinct().ToList(),
            ReduceTasks = args.Has("reducers") ? ParseList(args, "reducers", s => int.Parse(s, NumberStyles.Integer, CultureInfo.InvariantCulture), r => r >= 1 && r <= torus.Count).Distinct().ToList() : null,
            Parallelism = args.Int("parallel", 0, 64),
            Networks = networks,
        };
        bool switched = networks.Any(n => !n.Topology().HasTorusLinks);
        var (tcp, sendBuffer, direct) = SwitchedNetworkFlags.Tcp(args, switched);
        if (switched)
        {
            options = options with
            {
                SwitchedNetwork = SwitchedNetworkFlags.Network(args, networks.First(n => !n.Topology().HasTorusLinks), networks.Any(n => n.Topology().CablesFreePorts))!,
                GrinFreePorts = SwitchedNetworkFlags.FreePorts(args),
                Tcp = tcp,
                TcpSendBufferBytes = sendBuffer,
                Direct = direct,
                Aggregations = AggregationFlag.Parse(args, usesTcp: true, list: true),
            };
        }
        else
        {
            SwitchedNetworkFlags.Network(args, NetworkKind.Torus);
            AggregationFlag.Parse(args, usesTcp: false);
        }
        string number = figure switch { Figure.Figure6 => "6", Figure.Figure7 => "7", _ => "10" };
        string outDir = args.String("out") ?? Path.Combine("sweeps", $"figure{number}-{torus}");
        string csv = Path.Combine(outDir, $"figure{number}.csv");
        string? variant = Variant(options, switched);
        if (args.Flag("chart-only"))
        {
            return Replot(csv, rows => FigureSweep.WriteCharts(rows, outDir, torus: torus, variant: variant), FigureSweep.ReadCsv);
        }
        if (!args.Flag("force"))
        {
            // The largest R is the heaviest run; the generated inputs of its S stay beside it (one per server).
            int largest = figure == Figure.Figure10 ? 1
                : (options.ReduceTasks ?? (figure == Figure.Figure6 ? [torus.Count] : FigureSweep.DefaultReduceTasks(torus.Count))).Max();
            long bytes = figure == Figure.Figure10 ? options.InputSizes!.Max() : options.Settings.BytesPerServer;
            MemoryCheck.Require("sim sweep", torus.ToString(), torus.Count, largest, bytes, mapOutputOnDisk: false,
                options.Settings.Service, torus.Count * bytes, MemoryCheck.Available, figure == Figure.Figure10 ? "lower --input-sizes" : "lower --input-per-server or the largest R");
        }
        Directory.CreateDirectory(outDir);

        IReadOnlyList<SweepRow> rows;
        var wall = System.Diagnostics.Stopwatch.StartNew();
        using (var bar = new ProgressBar($"figure {number}"))
        {
            try
            {
                rows = FigureSweep.Run(figure, torus, options, new Progress<SweepProgress>(p => bar.Report((double)p.Done / p.Total, $"{p.Done}/{p.Total} {p.Current}")));
            }
            catch (ArgumentException ex)
            {
                throw new CliException($"sim sweep: {ex.Message}");
            }
        }
        FigureSweep.WriteCsv(rows, csv);
        var charts = FigureSweep.WriteCharts(rows, outDir, torus: torus, variant: variant);

        string sizes = figure == Figure.Figure10
            ? string.Join(" and ", options.InputSizes!.Select(b => Units.Bytes(b))) + " per server, S=0, R=1"
            : $"{Units.Bytes(options.Settings.BytesPerServer)} per server";
        Console.Out.WriteLine($"Figure {number} on {torus} ({torus.Count} servers, {sizes}, {options.Settings.Trees.Name()} trees{ComputeNote(options.Settings.Compute)}), {rows.Count} runs in {wall.Elapsed.TotalSeconds:0.#} s");
        Console.Out.WriteLine($"machine: {HostMachine.Current}");
        Console.Out.WriteLine($"{"panel",-8} {"input",9} {"S",6} {"R",5} {"mode",-24} {"time",12} {"switch 1G",12} {"switch 6G",12} {"1G 1:4",12}");
        foreach (var r in rows)
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{r.Panel,-8} {Units.Bytes(r.BytesPerServer),9} {r.OutputRatio,6:0.###} {r.ReduceTasks,5} {FigureSweep.SeriesName(r.Mode, r.Network, r.Aggregation),-24} {Units.Seconds(r.ShuffleReduceSeconds),12} {Units.Seconds(r.LowerBounds.Switch1G),12} {Units.Seconds(r.LowerBounds.Switch6G),12} {Units.Seconds(r.LowerBounds.Switch1GOversubscribed),12}"));
        }
        if (figure == Figure.Figure10)
        {
            // The paper's Figure 10 reports Camdoop's speedup over no aggregation at each size.
            foreach (var size in rows.GroupBy(r => r.BytesPerServer))
            {
                var camdoop = size.FirstOrDefault(r => r.Mode == "camdoop");
                var noAgg = size.FirstOrDefault(r => r.Mode == "noagg");
                if (camdoop is not null && noAgg is not null && camdoop.ShuffleReduceSeconds > 0)
                {
                    Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"{Units.Bytes(size.Key)} per server: Camdoop {noAgg.ShuffleReduceSeconds / camdoop.ShuffleReduceSeconds:0.00}x faster than Camdoop (no agg.)"));
                }
                foreach (var tcpRow in size.Where(r => r.Mode == "tcp"))
                {
                    if (camdoop is not null && camdoop.ShuffleReduceSeconds > 0)
                    {
                        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                            $"{Units.Bytes(size.Key)} per server: Camdoop {tcpRow.ShuffleReduceSeconds / camdoop.ShuffleReduceSeconds:0.00}x faster than {FigureSweep.SeriesName(tcpRow.Mode, tcpRow.Network)}"));
                    }
                }
            }
        }
        Console.Out.WriteLine($"wrote {csv}");
        foreach (var chart in charts)
        {
            Console.Out.WriteLine($"wrote {chart}");
        }
        return rows.All(r => r.Completed) ? 0 : 1;
    }

    /// <summary>
    /// What every run of a sweep shares, from the flags. A figure that has no use for one (Table 1 sets its own input
    /// sizes and always verifies; Figures 6, 7 and 10 never verify; --energy is refused outside them) overrides it.
    /// </summary>
    private static SimulationSettings Settings(ParsedArguments args) => new()
    {
        BytesPerServer = args.Bytes("input-per-server"),
        Seed = (ulong)args.Long("seed", 0),
        Verify = args.Flag("verify"),
        Service = CommonOptions.ServiceOptions(args),
        Trees = args.Choice("trees", TreeFamilyNames.All),
        Compute = CommonOptions.Compute(args),
        Energy = CommonOptions.Energy(args),
    };

    /// <summary>", compute paper" (or calibrated) for a header line; nothing when work is free.</summary>
    private static string ComputeNote(ComputeModel? compute) => compute is null ? "" : $", compute {ComputeModel.Name(compute.Mode)}";

    /// <summary>--chart-only: the charts drawn again from the sweep's CSV, nothing run.</summary>
    private static int Replot<T>(string csv, Func<IReadOnlyList<T>, IReadOnlyList<string>> write, Func<string, IReadOnlyList<T>> read)
    {
        if (!File.Exists(csv))
        {
            throw new CliException($"sim sweep: --chart-only: no {csv} (give --out the directory the sweep wrote)");
        }
        IReadOnlyList<T> rows;
        try
        {
            rows = read(csv);
        }
        catch (Exception ex) when (ex is FormatException or IndexOutOfRangeException)
        {
            throw new CliException($"sim sweep: --chart-only: {csv} is not a sweep's CSV ({ex.Message})");
        }
        if (rows.Count == 0)
        {
            throw new CliException($"sim sweep: --chart-only: {csv} has no rows");
        }
        foreach (string chart in write(rows))
        {
            Console.Out.WriteLine($"wrote {chart}");
        }
        return 0;
    }

    /// <summary>
    /// What a Figure 6, 7 or 10 sweep varies beyond the paper's, for its charts' titles: the networks when not the
    /// torus alone, the switches' buffers when not the default (deep ones say so), and the compute model.
    /// </summary>
    private static string? Variant(SweepOptions options, bool switched)
    {
        var parts = new List<string>();
        if (options.Networks.Count != 1 || options.Networks[0] != NetworkKind.Torus)
        {
            parts.Add(string.Join("/", options.Networks.Select(n => n.Name())));
        }
        int buffer = options.SwitchedNetwork.PortBufferBytes, standard = new SwitchedNetworkOptions().PortBufferBytes;
        if (switched && buffer != standard)
        {
            parts.Add(buffer > standard ? $"deep buffers, {Units.Bytes(buffer)} a port" : $"{Units.Bytes(buffer)} switch buffers");
        }
        if (Variant(options.Settings) is { } compute)
        {
            parts.Add(compute);
        }
        return parts.Count == 0 ? null : string.Join(", ", parts);
    }

    /// <summary>The compute model, when the runs price work ("compute paper", "compute paper, 10 us a frame"); null when work is free.</summary>
    private static string? Variant(SimulationSettings settings) =>
        settings.Compute is not { } compute ? null
            : compute.Rates.FrameNanoseconds > 0 ? $"compute {ComputeModel.Name(compute.Mode)}, {Units.Seconds(compute.Rates.FrameNanoseconds / 1e9)} a frame"
            : $"compute {ComputeModel.Name(compute.Mode)}";

    private static long ParseSize(string text) =>
        Units.TryParseBytes(text, out long bytes) ? bytes : throw new FormatException(text);

    private static int RunTable1(ParsedArguments args)
    {
        var torus = CommonOptions.Torus(args);
        long bytes = args.Bytes("input-per-server");
        var options = new Table1Options
        {
            SortBytesPerServer = bytes,
            WordCountBytesPerServer = bytes,
            Settings = Settings(args),
            ReduceTasks = args.Has("reducers") ? ParseList(args, "reducers", s => int.Parse(s, NumberStyles.Integer, CultureInfo.InvariantCulture), r => r >= 1 && r <= torus.Count).Distinct().ToList() : null,
            Parallelism = args.Int("parallel", 0, 64),
        };
        if (!args.Flag("force"))
        {
            // Verification keeps the raw input beside the map outputs and runs the reference on it.
            int largest = (options.ReduceTasks ?? [torus.Count]).Max();
            MemoryCheck.Require("sim sweep", torus.ToString(), torus.Count, largest, bytes, mapOutputOnDisk: false,
                options.Settings.Service, 4 * torus.Count * bytes, MemoryCheck.Available, "lower --input-per-server or the largest R");
        }
        string outDir = args.String("out") ?? Path.Combine("sweeps", $"table1-{torus}");
        Directory.CreateDirectory(outDir);
        IReadOnlyList<Table1Row> rows;
        var wall = System.Diagnostics.Stopwatch.StartNew();
        using (var bar = new ProgressBar("table 1"))
        {
            try
            {
                rows = Table1.Run(torus, options, new Progress<SweepProgress>(p => bar.Report((double)p.Done / p.Total, $"{p.Done}/{p.Total} {p.Current}")));
            }
            catch (ArgumentException ex)
            {
                throw new CliException($"sim sweep: {ex.Message}");
            }
        }
        string csv = Path.Combine(outDir, "table1.csv");
        Table1.ToCsv(rows).Save(csv);
        string md = Path.Combine(outDir, "table1.md");
        string table = Table1.ToMarkdown(rows, "simulated");
        File.WriteAllText(md, table);
        Console.Out.WriteLine($"Table 1 on {torus} ({torus.Count} servers, {Units.Bytes(bytes)} per server and job, 1 Gbps links, {options.Settings.Trees.Name()} trees{ComputeNote(options.Settings.Compute)}), {rows.Count} runs in {wall.Elapsed.TotalSeconds:0.#} s");
        Console.Out.WriteLine($"machine: {HostMachine.Current}");
        Console.Out.Write(table);
        Console.Out.WriteLine($"wrote {csv}");
        Console.Out.WriteLine($"wrote {md}");
        var wrong = rows.Where(r => !r.Verified).ToList();
        if (wrong.Count > 0)
        {
            Console.Error.WriteLine($"camdoop: sim sweep: {wrong.Count} of {rows.Count} outputs differ from the reference (first: {wrong[0].Job} R={wrong[0].ReduceTasks} {wrong[0].Mode})");
            return 1;
        }
        return 0;
    }

    private static int RunFigure9(ParsedArguments args)
    {
        var torus = CommonOptions.Torus(args);
        var options = new FailureSweepOptions
        {
            Settings = Settings(args),
            Fractions = ParseList(args, "fractions", s => double.Parse(s, NumberStyles.Float, CultureInfo.InvariantCulture), v => v is > 0 and < 1),
            ReduceTasks = args.Has("reducers") ? ParseList(args, "reducers", s => int.Parse(s, NumberStyles.Integer, CultureInfo.InvariantCulture), r => r >= 1 && r <= torus.Count).Distinct().ToList() : null,
            Parallelism = args.Int("parallel", 0, 64),
            ReplicatedOutput = args.Flag("replicated-output"),
            MemoryBytes = args.Flag("force") ? 0 : MemoryCheck.Available,
        };
        string outDir = args.String("out") ?? Path.Combine("sweeps", $"figure9-{torus}");
        string csv = Path.Combine(outDir, "figure9.csv");
        string svg = Path.Combine(outDir, "figure9.svg");
        string? variant = Variant(options.Settings);
        if (args.Flag("chart-only"))
        {
            return Replot(csv, rows => FailureSweep.Chart(rows, torus, variant).Save(svg), FailureSweep.ReadCsv);
        }
        if (torus.Count < 8)
        {
            throw CliException.Usage("sim sweep: --figure 9 needs a torus with a server that is neither the root nor a neighbour of it (3x3x3 or larger)");
        }
        if (!args.Flag("force"))
        {
            int largest = (options.ReduceTasks ?? [torus.Count]).Max();
            MemoryCheck.Require("sim sweep", torus.ToString(), torus.Count, largest, options.Settings.BytesPerServer, mapOutputOnDisk: false,
                options.Settings.Service, torus.Count * options.Settings.BytesPerServer, MemoryCheck.Available, "lower --input-per-server or the largest R");
        }
        Directory.CreateDirectory(outDir);
        IReadOnlyList<FailureSweepRow> rows;
        var wall = System.Diagnostics.Stopwatch.StartNew();
        using (var bar = new ProgressBar("figure 9"))
        {
            try
            {
                rows = FailureSweep.Run(torus, options, new Progress<SweepProgress>(p => bar.Report((double)p.Done / p.Total, $"{p.Done}/{p.Total} {p.Current}")));
            }
            catch (Exception ex) when (ex is ArgumentException or InvalidOperationException)
            {
                throw new CliException($"sim sweep: {ex.Message}");
            }
        }
        FailureSweep.ToCsv(rows).Save(csv);
        var charts = FailureSweep.Chart(rows, torus, variant).Save(svg);

        Console.Out.WriteLine($"Figure 9 on {torus} ({torus.Count} servers, {Units.Bytes(options.Settings.BytesPerServer)} per server, S=1, {options.Settings.Trees.Name()} trees{ComputeNote(options.Settings.Compute)}), {rows.Count} failure runs in {wall.Elapsed.TotalSeconds:0.#} s");
        Console.Out.WriteLine($"machine: {HostMachine.Current}");
        Console.Out.WriteLine($"{"R",5} {"failed",-15} {"server",-9} {"at",6} {"T",11} {"time",11} {"stretch",8} {"detected",10} {"sent again",11} {"verified",8}");
        foreach (var r in rows)
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{r.ReduceTasks,5} {r.Failed,-15} {r.Server,-9} {r.AtFractionOfT + "T",6} {Units.Seconds(r.BaselineSeconds),11} {Units.Seconds(r.ShuffleReduceSeconds),11} {r.Stretch,7:0.00}x {(r.DetectionSeconds is { } d ? Units.Seconds(d) : "-"),10} {Units.Bytes(r.ResentBytes),11} {(r.Verified is { } v ? (v ? "yes" : "NO") : "-"),8}"));
        }
        Console.Out.WriteLine($"wrote {csv}");
        Console.Out.WriteLine($"wrote {string.Join(", ", charts)}");
        return rows.All(r => r.Completed && r.Verified != false) ? 0 : 1;
    }

    private static int RunFigure8(ParsedArguments args)
    {
        var torus = CommonOptions.Torus(args);
        var options = new ConcurrencySweepOptions
        {
            Settings = Settings(args),
            Jobs = args.Int("jobs", 2, torus.Count),
            Parallelism = args.Int("parallel", 0, 64),
        };
        string outDir = args.String("out") ?? Path.Combine("sweeps", $"figure8-{torus}");
        string csv = Path.Combine(outDir, "figure8.csv");
        string svg = Path.Combine(outDir, "figure8.svg");
        string? variant = Variant(options.Settings);
        if (args.Flag("chart-only"))
        {
            return Replot(csv, rows => ConcurrencySweep.Chart(rows, torus, variant).Save(svg), ConcurrencySweep.ReadCsv);
        }
        if (!args.Flag("force"))
        {
            // The heaviest point is every copy at R = N at once, their inputs held beside them.
            long one = JobMemoryEstimate.Bytes(torus.Count, torus.Count, options.Settings.BytesPerServer, mapOutputOnDisk: false,
                (options.Settings.Service ?? new()).MemoryBudgetBytes);
            MemoryCheck.Require("sim sweep", torus.ToString(), torus.Count, torus.Count, options.Settings.BytesPerServer, mapOutputOnDisk: false,
                options.Settings.Service, ((options.Jobs - 1) * one) + (options.Settings.Verify ? options.Jobs * torus.Count * options.Settings.BytesPerServer : 0),
                MemoryCheck.Available, "lower --input-per-server or --jobs");
        }
        Directory.CreateDirectory(outDir);
        IReadOnlyList<ConcurrencySweepRow> rows;
        var wall = System.Diagnostics.Stopwatch.StartNew();
        using (var bar = new ProgressBar("figure 8"))
        {
            try
            {
                rows = ConcurrencySweep.Run(torus, options, new Progress<SweepProgress>(p => bar.Report((double)p.Done / p.Total, $"{p.Done}/{p.Total} {p.Current}")));
            }
            catch (Exception ex) when (ex is ArgumentException or InvalidOperationException)
            {
                throw new CliException($"sim sweep: {ex.Message}");
            }
        }
        ConcurrencySweep.ToCsv(rows).Save(csv);
        var charts = ConcurrencySweep.Chart(rows, torus, variant).Save(svg);

        Console.Out.WriteLine($"Figure 8 on {torus} ({torus.Count} servers, {Units.Bytes(options.Settings.BytesPerServer)} per server, S=1, {options.Jobs} jobs at once, {options.Settings.Trees.Name()} trees{ComputeNote(options.Settings.Compute)}) in {wall.Elapsed.TotalSeconds:0.#} s");
        Console.Out.WriteLine($"machine: {HostMachine.Current}");
        Console.Out.WriteLine($"{"placement",-11} {"R",5} {"job",4} {"servers",8} {"alone",11} {"at once",11} {"normalised",10} {"verified",8}");
        foreach (var r in rows)
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{r.Placement,-11} {r.ReduceTasks,5} {r.Job,4} {r.MapServers,8} {Units.Seconds(r.AloneSeconds),11} {Units.Seconds(r.TogetherSeconds),11} {r.NormalizedTime,9:0.000}x {(r.Verified is { } v ? (v ? "yes" : "NO") : "-"),8}"));
        }
        Console.Out.WriteLine($"wrote {csv}");
        Console.Out.WriteLine($"wrote {string.Join(", ", charts)}");
        return rows.All(r => r.Completed && r.Verified != false) ? 0 : 1;
    }

    private static IReadOnlyList<T> ParseList<T>(ParsedArguments args, string option, Func<string, T> parse, Func<T, bool> valid)
    {
        var text = args.Required(option);
        var values = new List<T>();
        foreach (var part in text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            T value;
            try
            {
                value = parse(part);
            }
            catch (FormatException)
            {
                throw CliException.Usage($"sim sweep: --{option} has a bad value '{part}'");
            }
            if (!valid(value))
            {
                throw CliException.Usage($"sim sweep: --{option} value '{part}' is out of range");
            }
            values.Add(value);
        }
        return values.Count > 0 ? values : throw CliException.Usage($"sim sweep: --{option} is empty");
    }

    /// <summary>--networks: torus and switched networks, each once, in the order given.</summary>
    private static List<NetworkKind> Networks(ParsedArguments args)
    {
        var networks = new List<NetworkKind>();
        foreach (string name in args.Required("networks").Split(',', StringSplitOptions.TrimEntries))
        {
            if (!NetworkKinds.TryParse(name, out var kind))
            {
                throw CliException.Usage($"sim sweep: --networks: '{name}' is not one of {SwitchedNetworkFlags.NetworkNames}");
            }
            if (!networks.Contains(kind))
            {
                networks.Add(kind);
            }
        }
        return networks;
    }
}
