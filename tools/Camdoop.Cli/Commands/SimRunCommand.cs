using System.Globalization;
using System.Text;
using Camdoop.Cli.CommandLine;
using Camdoop.Experiments;
using Camdoop.MapReduce.DirectShuffle.Plans;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop sim run`: one MapReduce job on a simulated CamCube, with the paper's metrics.</summary>
public static class SimRunCommand
{
    public static Command Create() =>
        new Command("run", "Run one MapReduce job on a simulated CamCube and report sizes, S, shuffle+reduce time, link use and the switch bounds.")
        {
            Details = "Every simulated server runs a real server's services: the input is placed in their chunk stores and the\n" +
                      "job is submitted to the server that coordinates it, which starts the shuffle on every server at once\n" +
                      "once each has mapped its chunks; the time reported runs from that start to the last reducer's end.\n" +
                      "Without --input the job's generated data set is used (synthetic at --output-ratio, Indy sort records,\n" +
                      "Zipf text for wordcount, item/score lines for topk). With --input PATH the job runs on your data: one\n" +
                      "file split across the servers at line (or 100-byte record) boundaries, or a directory of\n" +
                      "server-NNNNN.input files. Time is simulated; work costs no time (as in the paper) unless --compute\n" +
                      "prices it: merge and reduce then occupy each server's core at the chosen rates, and the map phase's\n" +
                      "modelled time is reported apart.\n" +
                      "With --fail the job first runs without failures (its time is T), then again with them: servers\n" +
                      "detect them by their beacons as real nodes do, take over what failed servers ran and resume from\n" +
                      "the last key received (the coordinator's job goes on at the next owner of its control key); mode tcp\n" +
                      "starts the job over on the servers left. The report says what failed, when it was detected, what was\n" +
                      "sent again and the stretch over T.\n" +
                      "With --concurrent K, K copies of the job run at once, copy k with its own data (seed + k): horizontal\n" +
                      "placement maps every copy on every server and keeps their reduce tasks apart; vertical placement gives\n" +
                      "each copy --servers-per-job servers of its own, chosen from the seed. Each copy also runs alone on the\n" +
                      "same servers, and the report gives each one's time at once and normalised to its time alone.\n" +
                      "With --network switch, racks, fattree, netagg or grin the servers are wired to switches, not to each other\n" +
                      "(--torus still names them and their data) and the job runs in mode tcp (the default there), TCP\n" +
                      "Camdoop: every map output goes straight to its reducer over TCP through the switches and is merged only\n" +
                      "there; the switch bounds stay in the report beside the simulated time. --aggregation rack, binary or\n" +
                      "chain sends the streams up trees of servers instead, each merging (and combining) its children's\n" +
                      "streams with its own output.\n" +
                      "grin is racks plus --free-ports cables per server to servers of the same or a neighbouring rack:\n" +
                      "connections are pinned to the NIC or a cable, and neighbours relay for each other.",
        }
            .Option("torus", "Torus size", "XxYxZ", "3x3x3")
            .Option("job", "synthetic | wordcount | sort | topk[?k=N] | median | PATH.dll#Type", "JOB", "synthetic")
            .Option("mapper", "A streaming job instead of --job: the mapper, an executable of --job-dir that turns input lines into key<TAB>value lines", "CMD")
            .Option("reducer", "The streaming job's reducer: an executable of --job-dir that reads key<TAB>value lines sorted by key", "CMD")
            .Option("combiner", "The streaming job's combiner, run like the reducer over each map task's sorted output before the shuffle", "CMD")
            .Option("job-dir", "The directory of --mapper, --reducer and --combiner", "DIR", ".")
            .Option("output-ratio", "Output ratio S of the synthetic data, 0 (= 1/N) .. 1", "S", "0.5")
            .Option("reducers", "Number of reduce tasks R (1..N)", "R", "1")
            .Option("mode", "camdoop (on-path aggregation) | noagg (merge only on path) | tcp (TCP Camdoop through a switch; needs --network); " +
                "when not given, camdoop on the torus and tcp on a switched network", "MODE")
            .Option("input-per-server", "Generated input per server", "SIZE", "2MB")
            .Option("input", "Run on this file or directory instead of generated data", "PATH")
            .Option("output", "Write each reduce task's output here as part-NNNNN", "DIR")
            .Option("seed", "Random seed", "N", "1")
            .Option("loss", "Random frame loss rate on every link, 0..1", "RATE", "0")
            .Option("link-rate-gbps", "Link rate in Gbit/s", "RATE", "1")
            .Option("threads", "Threads for the simulation, 0 = by the cube's size: one below 512 servers, every core from 512 (the results do not depend on it)", "N", "0")
            .Option("max-window", CommonOptions.MaxWindowHelp, "SIZE", "128KB")
            .Option("trees", CommonOptions.TreesHelp, "FAMILY", "shallow")
            .Option("map-output", "auto (memory when the input is under a sixteenth of free memory) | memory | disk (indexed run files)", "WHERE", "auto")
            .Option("concurrent", "Run this many copies of the job at once, each with its own data", "K", "1")
            .Option("placement", "With --concurrent: horizontal (every server maps every copy) | vertical (each copy on its own servers)", "HOW", "horizontal")
            .Option("servers-per-job", "With --placement vertical: servers of each copy, chosen from the seed; 0 = N/K", "M", "0")
            .Option("fail", "Fail a server or cable, repeatable: WHAT (root | root-neighbour | random | coordinator | X,Y,Z | link:X,Y,Z:PORT; with --network netagg --mode tcp also an agg box, box@rack0 or box@core) @ WHEN (0.25T or 15ms after the shuffle starts, map: while the servers map, start: down before the job is submitted)", "WHAT@WHEN")
            .Option("energy", CommonOptions.EnergyHelp, "MODEL")
            .Option("compute", CommonOptions.ComputeHelp, "MODE", "off")
            .Option("frame-cost", CommonOptions.FrameCostHelp, "DURATION")
            .Option("compute-rates", CommonOptions.ComputeRatesHelp, "FILE")
            .Option("query", "Ask a monitoring query while the job runs, repeatable: select ... from TABLE ... every INTERVAL (simulated time; docs/monitoring.md)", "QUERY")
            .Option("query-from", "The server that asks the queries", "X,Y,Z", "0,0,0")
            .Option("query-for", "Keep asking the queries this long after the job ends; without it, one more round", "DURATION")
            .Option("query-out", "Write each query's rounds as query-K.csv here, and a chart of its last column as query-K.svg and query-K.png", "DIR")
            .AddSwitchedNetworkOptions()
            .AddAggregationOption()
            .AddNetAggOptions()
            .Option("limit", SimLimitOption.Help, "LIMIT")
            .Flag("replicate-output", "Each reducer streams its output to the server its task would start over on, so a failed root resumes from that copy")
            .Flag("verify", "Check every output against the single-process reference MapReduce")
            .Flag("trace-hash", "Hash every simulated event (time, kind, server, port, frame length) into the report's event trace hash, on one thread: runs with equal hashes simulated the same")
            .Flag("force", "Run even when the job's estimated memory exceeds what this machine has available")
            .Flag("json", "Print one JSON object")
            .Handle(Run);

    /// <summary>The run's options, and the bytes of input it maps (the user's file or directory, listed once, or the generated data).</summary>
    private static JobSimulationOptions Options(ParsedArguments args, out long inputBytes)
    {
        var torus = CommonOptions.Torus(args);
        string job = JobText(args);
        string? input = args.String("input");
        var workload = input is not null ? Workload.Files : WorkloadOf(job);
        if (input is not null && !File.Exists(input) && !Directory.Exists(input))
        {
            throw new CliException($"sim run: input '{input}' does not exist");
        }
        inputBytes = InputBytes(input, args.Bytes("input-per-server") * torus.Count);
        var kind = SwitchedNetworkFlags.Kind(args);
        var mode = SwitchedNetworkFlags.Mode(args, kind);
        SwitchedNetworkFlags.CheckMode(args, mode, kind);
        var (tcp, sendBuffer, direct) = SwitchedNetworkFlags.Tcp(args, mode == ShuffleMode.Tcp);
        var aggregation = AggregationFlag.Parse(args, mode == ShuffleMode.Tcp)[0];
        if (kind.Topology().HasAggBoxes && aggregation != Aggregation.Direct)
        {
            throw CliException.Usage("sim run: --aggregation is for the servers of the other switched networks; on netagg the agg boxes aggregate");
        }
        return new JobSimulationOptions
        {
            Network = NetAggFlags.Apply(args, SwitchedNetworkFlags.Network(args, kind)),
            AggregationTrees = NetAggFlags.Trees(args, kind),
            Tcp = tcp,
            TcpSendBufferBytes = sendBuffer,
            Direct = direct,
            Aggregation = aggregation,
            Torus = torus,
            Workload = workload,
            Job = workload == Workload.Files || job.Contains('?', StringComparison.Ordinal) ? job : null,
            InputPath = input,
            OutputDirectory = args.String("output"),
            OutputRatio = args.Double("output-ratio", 0, 1),
            Settings = new SimulationSettings
            {
                BytesPerServer = args.Bytes("input-per-server"),
                Trees = args.Choice("trees", TreeFamilyNames.All),
                Seed = (ulong)args.Long("seed", 0),
                Energy = CommonOptions.Energy(args),
                Verify = args.Flag("verify"),
                Service = CommonOptions.ServiceOptions(args),
                Compute = CommonOptions.Compute(args),
            },
            ReduceTasks = args.Int("reducers", 1, torus.Count),
            Mode = mode,
            LossRate = args.Double("loss", 0, 0.99),
            LinkRateBitsPerSecond = (long)(args.Double("link-rate-gbps", 0.001, 400) * 1e9),
            MapOutputOnDisk = args.Choice("map-output", MapOutputOnDiskChoices)
                ?? !JobSimulationInput.MapOutputFitsInMemory(inputBytes, GC.GetGCMemoryInfo().TotalAvailableMemoryBytes),
            SimulationThreads = args.Int("threads", 0, 1024),
            ReplicateOutput = args.Flag("replicate-output"),
            TraceEvents = args.Flag("trace-hash"),
            Queries = Queries(args),
            QueryFrom = QueryFrom(args, torus),
            QueryTailNs = args.Has("query-for") ? args.Nanoseconds("query-for") : 0,
        };
    }

    /// <summary>--job, or the streaming job that --mapper and --reducer name, by their paths under --job-dir.</summary>
    private static string JobText(ParsedArguments args)
    {
        if (!args.Has("mapper") && !args.Has("reducer") && !args.Has("combiner"))
        {
            return args.Required("job");
        }
        if (args.Strings("job").Count > 0 || !args.Has("mapper") || !args.Has("reducer"))
        {
            throw CliException.Usage("sim run: give --job, or a streaming job's --mapper CMD and --reducer CMD (and maybe --combiner CMD)");
        }
        string directory = args.Required("job-dir");
        string Program(string option)
        {
            string name = args.Required(option);
            return name.Length > 0 && name == Path.GetFileName(name) && name is not ("." or "..")
                ? Path.GetFullPath(Path.Combine(directory, name))
                : throw CliException.Usage($"sim run: --{option} '{name}' must name a file of --job-dir by its file name alone");
        }
        try
        {
            return StreamingJob.Spec(Program("mapper"), Program("reducer"), args.Has("combiner") ? Program("combiner") : null).ToString();
        }
        catch (JobLoadException e)
        {
            throw CliException.Usage($"sim run: {e.Message}");
        }
    }

    /// <summary>The --query texts, each checked: a bad one is one clear line before anything runs.</summary>
    private static List<string> Queries(ParsedArguments args)
    {
        var queries = args.Strings("query").ToList();
        foreach (var query in queries)
        {
            try
            {
                SimulatedQueries.Check(query);
            }
            catch (ArgumentException e)
            {
                throw CliException.Usage($"sim run: --query: {e.InnerException?.Message ?? e.Message}");
            }
        }
        return queries;
    }

    private static Coordinate QueryFrom(ParsedArguments args, Torus torus)
    {
        string text = args.Required("query-from");
        return Coordinate.TryParse(text, out var from) && torus.Contains(from) ? from
            : throw CliException.Usage($"sim run: --query-from '{text}' is not a server of the {torus} torus (give X,Y,Z)");
    }

    // --map-output: whether the runs go to disk; auto (null) decides by the input's size.
    private static readonly IReadOnlyDictionary<string, bool?> MapOutputOnDiskChoices = new Dictionary<string, bool?>(StringComparer.Ordinal)
    {
        ["auto"] = null,
        ["memory"] = false,
        ["disk"] = true,
    };

    /// <summary>Bytes of the user's input file or directory, else of the generated data.</summary>
    private static long InputBytes(string? input, long generated) =>
        input is null ? generated
        : File.Exists(input) ? new FileInfo(input).Length
        : new DirectoryInfo(input).EnumerateFiles("*", SearchOption.AllDirectories).Sum(f => f.Length);

    private static Workload WorkloadOf(string job)
    {
        string name = job.Split('?')[0].ToLowerInvariant();
        return name switch
        {
            "synthetic" => Workload.Synthetic,
            "wordcount" => Workload.WordCount,
            "sort" => Workload.Sort,
            "topk" => Workload.TopK,
            StreamingJob.JobName => throw CliException.Usage("sim run: a streaming job has no generated data set; give it --input PATH"),
            _ => throw CliException.Usage($"sim run: job '{job}' has no generated data set; give it --input PATH"),
        };
    }

    private static int Run(ParsedArguments args)
    {
        var options = Options(args, out long inputBytes);
        if (!args.Flag("force"))
        {
            int servers = options.Torus.Count;
            long inputPerServer = inputBytes / servers;
            MemoryCheck.Require("sim run", options.Torus.ToString(), servers, options.ReduceTasks, inputPerServer, options.MapOutputOnDisk,
                options.Settings.Service, 0, MemoryCheck.Available, "lower --reducers or --input-per-server");
        }
        var failures = args.Strings("fail").Select(f => ParseFailure(f)).ToList();
        int copies = args.Int("concurrent", 1, 64);
        options = options with { Limits = SimLimitOption.Parse(args.Strings("limit"), options.Torus, options.JobId, copies) };
        var placement = args.Choice("placement", Placements);
        int serversPerJob = args.Int("servers-per-job", 0, options.Torus.Count);
        if (options.Mode == ShuffleMode.Tcp && (copies > 1 || placement == JobPartitioning.Vertical
            || options.Queries.Count > 0 || options.ReplicateOutput))
        {
            throw CliException.Usage("sim run: --mode tcp runs one job without --concurrent, --placement vertical, --query or --replicate-output");
        }
        bool tcp = options.Mode == ShuffleMode.Tcp;
        var boxes = tcp ? options.Network?.Topology.AggBoxes(options.Network, options.Torus.Count) : null;
        bool netAgg = boxes is not null;
        if (failures.Any(f => (tcp && (f.What.StartsWith("link:", StringComparison.Ordinal) || (f.IsAggBox && (!netAgg || f.AtNanoseconds < 0 || f.DuringMap))))
            || (!tcp && f.IsAggBox)))
        {
            throw CliException.Usage(tcp
                ? "sim run: --fail with --mode tcp takes servers, and agg boxes (box@rack0, box@core) of --network netagg during the shuffle; a switched network has no torus cable to cut"
                : "sim run: --fail box@NAME is for --network netagg --mode tcp");
        }
        if (boxes is not null && failures.Count > 0)
        {
            if (failures.FirstOrDefault(f => boxes.BoxNamed(f.What["box@".Length..]) < 0) is { } unknown)
            {
                var names = Enumerable.Range(boxes.Servers, boxes.Boxes).Select(boxes.NameOf);
                throw CliException.Usage($"sim run: --fail {unknown.What} is not an agg box of this network: {string.Join(", ", names)}");
            }
        }
        if ((copies > 1 || placement == JobPartitioning.Vertical) && options.Queries.Count > 0)
        {
            throw CliException.Usage("sim run: --query watches one job; leave out --concurrent and --placement");
        }
        if (copies > 1 && failures.Count > 0)
        {
            throw CliException.Usage("sim run: --fail injects failures into one job; leave out --concurrent");
        }
        if (copies > 1 && !args.Flag("force"))
        {
            // The copies' map outputs and shuffles are all held at once.
            MemoryCheck.Require("sim run", options.Torus.ToString(), options.Torus.Count, options.ReduceTasks, inputBytes / options.Torus.Count,
                options.MapOutputOnDisk, options.Settings.Service, (copies - 1) * JobMemoryEstimate.Bytes(options.Torus.Count, options.ReduceTasks,
                inputBytes / options.Torus.Count, options.MapOutputOnDisk, (options.Settings.Service ?? new()).MemoryBudgetBytes),
                MemoryCheck.Available, "lower --concurrent, --reducers or --input-per-server");
        }
        var result = copies > 1 || placement == JobPartitioning.Vertical ? RunConcurrent(options, copies, placement, serversPerJob)
            : failures.Count == 0 ? Execute(options, label: "sim run") : RunWithFailures(options, failures);
        if (args.Flag("json"))
        {
            Console.Out.WriteLine(result.ToJson());
        }
        else
        {
            Console.Out.Write(Describe(result));
            Console.Out.Write(SimLimitOption.Describe(options.Limits));
            Console.Out.Write(QueryReport.Describe(result.Queries));
        }
        if (args.String("query-out") is { } queryOut)
        {
            foreach (var path in QueryReport.WriteCsv(result.Queries, queryOut))
            {
                Console.Error.WriteLine($"wrote {path}");
            }
        }
        if (!result.Completed)
        {
            Console.Error.WriteLine($"camdoop sim run: the job did not complete: {string.Join("; ", result.Errors)}");
            return 1;
        }
        if (result.Verified == false)
        {
            Console.Error.WriteLine($"camdoop sim run: output differs from the reference: {result.VerificationError}");
            return 1;
        }
        return 0;
    }

    private static readonly IReadOnlyDictionary<string, JobPartitioning> Placements = new Dictionary<string, JobPartitioning>(StringComparer.Ordinal)
    {
        ["horizontal"] = JobPartitioning.Horizontal,
        ["vertical"] = JobPartitioning.Vertical,
    };

    /// <summary>
    /// <paramref name="copies"/> copies of the job at once, placed by <paramref name="placement"/>, each also alone on
    /// its own servers; copy k writes its output, if any, to job-k under the output directory.
    /// </summary>
    internal static JobSimulationResult RunConcurrent(JobSimulationOptions options, int copies, JobPartitioning placement, int serversPerJob)
    {
        return WithProgressBar("sim run", progress =>
        {
            var jobs = ConcurrentPlacement.Copies(options, copies, placement, serversPerJob)
                .Select((j, k) => j with { OutputDirectory = options.OutputDirectory is null ? null : Path.Combine(options.OutputDirectory, $"job-{k}") })
                .ToList();
            return ConcurrentJobSimulation.Run(jobs, runAlone: true, progress) with { Placement = placement == JobPartitioning.Horizontal ? "horizontal" : "vertical" };
        });
    }

    private static FailureRequest ParseFailure(string text)
    {
        try
        {
            return FailureRequest.Parse(text);
        }
        catch (FormatException e)
        {
            throw CliException.Usage($"sim run: --fail {e.Message}");
        }
    }

    /// <summary>
    /// The job without failures first (its shuffle-and-reduce time is T, with a real node's beacons), then with them,
    /// on the same map outputs; the second run's report carries T and the stretch.
    /// </summary>
    internal static JobSimulationResult RunWithFailures(JobSimulationOptions options, IReadOnlyList<FailureRequest> requests)
    {
        using var input = Prepare(options, "sim run: map");
        // The queries watch the run with failures only.
        var unwatched = options with { NodeBeacons = true, Settings = options.Settings with { Verify = false }, Queries = [] };
        var baseline = Execute(unwatched, "sim run: without failures", input);
        if (!baseline.Completed)
        {
            throw new CliException($"sim run: the job did not complete without failures: {string.Join("; ", baseline.Errors)}");
        }
        long t = (long)Math.Round(baseline.ShuffleReduceSeconds * 1e9);
        var placement = new Camdoop.MapReduce.Service.JobPlacement(options.Torus, options.JobId, options.ReduceTasks, options.Settings.Trees);
        List<InjectedFailure> failures;
        try
        {
            var boxes = options.Network?.Topology.AggBoxes(options.Network, options.Torus.Count);
            failures = requests.Select(r => r.Resolve(options.Torus, placement, (int)options.Settings.Seed, t, boxes)).ToList();
        }
        catch (Exception e) when (e is FormatException or InvalidOperationException)
        {
            throw new CliException($"sim run: --fail {e.Message}");
        }
        var result = Execute(options with { Failures = failures }, "sim run: with failures", input);
        return result with
        {
            Recovery = result.Recovery! with
            {
                BaselineSeconds = baseline.ShuffleReduceSeconds,
                Stretch = baseline.ShuffleReduceSeconds > 0 ? result.ShuffleReduceSeconds / baseline.ShuffleReduceSeconds : null,
            },
            WallSeconds = result.WallSeconds + baseline.SimulationWallSeconds,
        };
    }

    /// <summary>Runs the simulation with a progress bar, turning option errors into one-line CLI errors.</summary>
    internal static JobSimulationResult Execute(JobSimulationOptions options, string label, JobSimulationInput? input = null) =>
        WithProgressBar(label, progress =>
            input is null ? JobSimulation.Run(options, progress) : JobSimulation.Run(options, input, progress));

    /// <summary>Generates and maps the inputs once, for several runs that differ only in mode.</summary>
    internal static JobSimulationInput Prepare(JobSimulationOptions options, string label) =>
        WithProgressBar(label, progress => JobSimulationInput.Prepare(options, keepInputs: options.Settings.Verify, progress: progress));

    /// <summary>Runs one phase behind a progress bar; bad options and unloadable jobs become one-line CLI errors.</summary>
    private static T WithProgressBar<T>(string label, Func<IProgress<JobSimulationProgress>, T> run)
    {
        try
        {
            using var bar = new ProgressBar(label);
            return run(new Progress<JobSimulationProgress>(p => bar.Report(p.Fraction, $"{p.Phase}: {p.Detail}")));
        }
        catch (ArgumentException ex)
        {
            throw new CliException($"{label}: {ex.Message}");
        }
        catch (Camdoop.MapReduce.Jobs.JobLoadException ex)
        {
            throw new CliException($"{label}: {ex.Message}");
        }
        catch (InvalidDataException ex)
        {
            // Input the job cannot read (a partial record, an over-long line or key): the user's to fix.
            throw new CliException($"{label}: {ex.Message}");
        }
    }

    public static string Describe(JobSimulationResult r)
    {
        var sb = new StringBuilder();
        void Line(string name, string value) => sb.Append(name.PadRight(34)).AppendLine(value);
        string S(double seconds) => Units.Seconds(seconds);
        Line("job", r.Tcp is null
            ? $"{r.Job} on {r.Torus} ({r.Servers} servers), R={r.ReduceTasks}, mode {r.Mode}, {r.Trees} trees"
            : $"{r.Job} on {r.Servers} servers named as {r.Torus}, R={r.ReduceTasks}, mode {r.Mode}, network {r.Network}, {r.Aggregation} aggregation");
        Line("input / intermediate / output", $"{Units.Bytes(r.InputBytes)} / {Units.Bytes(r.IntermediateBytes)} / {Units.Bytes(r.OutputBytes)}");
        if (r.Coordinator is { } coordinator)
        {
            Line("coordinator", r.Takeovers > 0 ? $"{coordinator}, taken over by the next owner of the job's control key" : coordinator);
        }
        Line("output ratio S (achieved)", r.OutputRatio.ToString("0.####", CultureInfo.InvariantCulture));
        Line("shuffle+reduce time (simulated)", S(r.ShuffleReduceSeconds));
        Line("  Switch (1 Gbps) lower bound", S(r.LowerBounds.Switch1G));
        Line("  Switch (6 Gbps) lower bound", S(r.LowerBounds.Switch6G));
        Line("  Switch (1 Gbps, 1:4 oversub.)", S(r.LowerBounds.Switch1GOversubscribed));
        if (r.Tcp is { } tcp)
        {
            double bound = NetworkKinds.OfLabel(r.Network)?.HasOversubscribedRacks == true ? r.LowerBounds.Switch1GOversubscribed : tcp.NicsPerServer == 6 ? r.LowerBounds.Switch6G : r.LowerBounds.Switch1G;
            Line("  against its network's bound", string.Create(CultureInfo.InvariantCulture, $"{(bound > 0 ? r.ShuffleReduceSeconds / bound : 0):0.000}x"));
            Line("tcp", string.Create(CultureInfo.InvariantCulture,
                $"{tcp.CongestionControl}, min RTO {S(tcp.MinRtoSeconds)}, rwnd {(tcp.ReceiveWindowBytes == 0 ? "unlimited" : Units.Bytes(tcp.ReceiveWindowBytes))}, {(tcp.PacingBitsPerSecond == 0 ? "unpaced" : $"paced at {tcp.PacingBitsPerSecond / 1e6:0.###} Mbit/s")}, send buffer {Units.Bytes(tcp.SendBufferBytes)}, {tcp.ConcurrentStreams} streams at once per server, {(tcp.ParallelFetches == 0 ? "pushed" : $"{tcp.ParallelFetches} admitted at once per receiver")}"));
            Line("switches", string.Create(CultureInfo.InvariantCulture,
                $"{Units.Bytes(tcp.PortBufferBytes)} per port, ECN {(tcp.EcnThresholdBytes == 0 ? "off" : "at " + Units.Bytes(tcp.EcnThresholdBytes))}, {tcp.NicsPerServer} NIC(s) per server"));
            Line("  drops / ECN marks / peak queue", $"{tcp.SwitchDrops} / {tcp.EcnMarks} / {Units.Bytes(tcp.PeakQueueBytes)}");
            Line("  connections / fast retransmits", $"{tcp.Connections} / {tcp.FastRetransmits}");
        }
        foreach (var box in r.AggBoxes ?? [])
        {
            Line($"  {box.Name} ({box.Host})", string.Create(CultureInfo.InvariantCulture,
                $"{(box.Failed ? "FAILED, " : "")}merged {Units.Bytes(box.MergedBytes)}, forwarded {Units.Bytes(box.ForwardedBytes)} ({box.Reduction:P0}), busy {S(box.BusySeconds)}"));
        }
        if (r.Tcp is null)
        {
            Line("link bytes / data byte-hops", $"{Units.Bytes(r.LinkBytes)} / {Units.Bytes(r.DataByteHops)}");
        }
        else
        {
            Line("link bytes / between switches", $"{Units.Bytes(r.LinkBytes)} / {Units.Bytes(r.CoreLinkBytes)}");
            if (r.MergedBytes > 0)
            {
                Line("merged / forwarded on the way", string.Create(CultureInfo.InvariantCulture,
                    $"{Units.Bytes(r.MergedBytes)} / {Units.Bytes(r.ForwardedBytes)} ({1 - ((double)r.ForwardedBytes / r.MergedBytes):P0} fewer)"));
            }
        }
        Line("busiest link", string.Create(CultureInfo.InvariantCulture,
            $"{Units.Bytes(r.BusiestLinkBytes)}, busy {Units.Seconds(r.BusiestLinkBusySeconds)} ({(r.ShuffleReduceSeconds > 0 ? r.BusiestLinkBusySeconds / r.ShuffleReduceSeconds : 0):P0} of the shuffle)"));
        Line("frames: data / acks / dropped", $"{r.DataFrames} / {r.AckFrames} / {r.FramesDropped}");
        Line("retransmitted bytes / timeouts", $"{Units.Bytes(r.RetransmittedBytes)} / {r.Timeouts}");
        Line(r.Tcp is null ? "aggregated bytes per server" : r.MergedBytes > 0 ? "merged+reduced bytes per server" : "reduced bytes per server", $"min {Units.Bytes(r.AggregatedBytes.Min)}, median {Units.Bytes(r.AggregatedBytes.Median)}, max {Units.Bytes(r.AggregatedBytes.Max)}");
        if (r.Compute is { } c)
        {
            Line("compute", string.Create(CultureInfo.InvariantCulture,
                $"{c.Mode}: map {c.MapGbps:0.##} Gbit/s x {c.MapCores} cores, merge {c.MergeGbps:0.##}, reduce {c.ReduceGbps:0.##} Gbit/s"));
            Line("  busiest server's core", string.Create(CultureInfo.InvariantCulture,
                $"{c.BusiestServer}, busy {c.BusiestServerBusyFraction:P0} of the shuffle (merge {S(c.BusiestServerMergeSeconds)}, reduce {S(c.BusiestServerReduceSeconds)}{(c.FrameMicroseconds > 0 ? $", frames {S(c.BusiestServerFrameSeconds)} at {c.FrameMicroseconds:0.###} us each" : "")})"));
            Line("  map phase (modelled, apart)", S(c.MapSeconds));
        }
        if (r.Energy is { } e)
        {
            Line($"network energy ({e.Model})", string.Create(CultureInfo.InvariantCulture,
                $"{e.Joules:0.####} J over {S(e.Seconds)}, {e.Joules / Math.Max(e.LegacyJoules, double.Epsilon):P1} of legacy ({e.Ports} ports at {e.WattsPerPort:0.##} W)"));
            Line("  torus links / NICs / switch ports", string.Create(CultureInfo.InvariantCulture,
                $"{e.ByKind.TorusLinks:0.####} / {e.ByKind.ServerNics:0.####} / {e.ByKind.SwitchPorts:0.####} J"));
            Line("  low-power idle / wake-ups", string.Create(CultureInfo.InvariantCulture, $"{e.LowPowerShare:P1} of port time / {e.Wakes:N0}"));
        }
        if (r.Tcp is null)
        {
            Line("shuffle buffers per server, peak", $"min {Units.Bytes(r.ShuffleBufferPeakBytes.Min)}, median {Units.Bytes(r.ShuffleBufferPeakBytes.Median)}, max {Units.Bytes(r.ShuffleBufferPeakBytes.Max)}");
        }
        foreach (var f in r.Failures)
        {
            Line($"failed: {f.What}", string.Create(CultureInfo.InvariantCulture,
                $"{(f.Link is not null ? $"cable {f.Link}" : f.What.StartsWith("box@", StringComparison.Ordinal) ? $"agg box on host {f.Server}" : $"server {f.Server}")} at {S(f.AtSeconds)}, detected at {(f.DetectedAtSeconds is { } d ? S(d) : "never (nothing needed it)")}"));
        }
        if (r.Recovery is { } rec)
        {
            // The stream shuffle reruns no map task and adopts no vertex: a failed agg box's streams are sent again, and a
            // job that lost a server starts over on the servers left.
            Line("recovery", r.Mode == "tcp"
                ? r.Attempts > 0
                    ? $"the job started over {Units.Count(r.Attempts, "time")} on the servers left (a tcp-mode job cannot take over a lost server's streams)"
                    : $"{Units.Bytes(rec.ResentBytes)} sent again (the streams that crossed the failed box)"
                : $"{Units.Bytes(rec.ResentBytes)} sent again, {Units.Count(rec.MapTasksRerun, "map task")} run again, {Units.Count(rec.VerticesAdopted, "vertex", "vertices")} taken over");
            if (rec.Stretch is { } stretch && rec.BaselineSeconds is { } baseline)
            {
                Line("  stretch over T", string.Create(CultureInfo.InvariantCulture, $"{stretch:0.000}x (T = {S(baseline)} without failures)"));
            }
        }
        foreach (var j in r.Jobs ?? [])
        {
            Line($"job {j.Index} ({r.Placement})", string.Create(CultureInfo.InvariantCulture,
                $"{j.Job}, R={j.ReduceTasks}, seed {j.Seed}, {Units.Count(j.MapServers.Count, "server")} mapping, {Units.Bytes(j.IntermediateBytes)} intermediate"));
            Line("  shuffle+reduce time", string.Create(CultureInfo.InvariantCulture,
                $"{S(j.ShuffleReduceSeconds)} at once, {(j.AloneSeconds is { } alone ? S(alone) : "-")} alone: {(j.NormalizedTime is { } x ? x.ToString("0.000", CultureInfo.InvariantCulture) + "x" : "-")}"));
            if (j.Verified is bool jv)
            {
                Line("  verified against reference", jv ? "yes, identical" : $"NO: {j.VerificationError}");
            }
        }
        if (r.Verified is bool v)
        {
            Line("verified against reference", v ? "yes, identical" : $"NO: {r.VerificationError}");
        }
        Line("wall clock", string.Create(CultureInfo.InvariantCulture,
            $"{r.WallSeconds:0.##} s (map {r.MapWallSeconds:0.##} s, runs {(r.MapOutputOnDisk ? "on disk" : "in memory")}, simulation {r.SimulationWallSeconds:0.##} s, {r.Events:N0} events)"));
        if (r.EventTraceHash is not null)
        {
            Line("event trace hash", r.EventTraceHash);
        }
        if (r.Machine is not null)
        {
            Line("machine", r.Machine.ToString());
        }
        if (r.Reducers.Count > 0 && r.Reducers[0].OutputFile is not null)
        {
            Line("output", Path.GetDirectoryName(r.Reducers[0].OutputFile) ?? "");
        }
        return sb.ToString();
    }
}
