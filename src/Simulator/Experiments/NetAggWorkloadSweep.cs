using System.Globalization;
using Camdoop.Experiments.Reports;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.DirectShuffle.Plans;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>What the NetAgg workload sweep runs: the workload, how many draws of it, and the networks of the designs.</summary>
public sealed record NetAggWorkloadSweepOptions
{
    /// <summary>The workload; trial k draws it with <see cref="NetAggWorkloadOptions.Seed"/> + k.</summary>
    public required NetAggWorkloadOptions Workload { get; init; }

    public int Trials { get; init; } = 5;

    /// <summary>Check every request's and flow's output against the single-process reference.</summary>
    public bool Verify { get; init; } = true;

    /// <summary>The racks the servers' own aggregation runs on (rack, binary, chain); NetAgg adds its boxes to them.</summary>
    public SwitchedNetworkOptions Racks { get; init; } = new() { Kind = NetworkKind.Racks };

    /// <summary>How every server's TCP behaves.</summary>
    public TcpOptions Tcp { get; init; } = new();

    /// <summary>Bytes of a stream kept until acknowledged (the socket's send buffer).</summary>
    public int TcpSendBufferBytes { get; init; } = 128 * 1024;

    /// <summary>The stream shuffle's settings (admission, streams per server); null keeps the defaults.</summary>
    public DirectShuffleOptions? Direct { get; init; }

    /// <summary>Designs in the order the reports list them: rack, binary, chain (edge aggregation) and netagg.</summary>
    public IReadOnlyList<string> Designs { get; init; } = NetAggWorkloadSweep.AllDesigns;
}

/// <summary>One request's or background flow's completion under one design: every worker's flow completed then.</summary>
public sealed record FlowCompletion(string Design, int Trial, int Group, bool Aggregatable, int Flows, long BytesPerWorker, long IntermediateBytes,
    long OutputBytes, double Seconds, bool? Verified);

/// <summary>One draw run under one design: its TCP retransmission timeouts and switch drops, over all its flows.</summary>
public sealed record WorkloadRun(string Design, int Trial, long Timeouts, long SwitchDrops);

/// <summary>A design's flow completion times over every trial, each worker's flow counted once.</summary>
public sealed record DesignSummary(string Design, int Flows, double MedianSeconds, double P99Seconds, double? P99OverRack, double AggregatableP99Seconds,
    double BackgroundP99Seconds);

/// <summary>
/// The NetAgg paper's Figure 8 point (α = 10 %) as a sweep: its workload (<see cref="NetAggWorkload"/>) drawn
/// <see cref="NetAggWorkloadSweepOptions.Trials"/> times, each draw run under rack-level aggregation, a binary tree, a
/// chain and NetAgg's boxes on the same racks, every request a real TCP Camdoop job and every background flow a job
/// of one map server sent straight to its reducer, all started at once; the metric is the paper's, the 99th
/// percentile of the flows' completion times, normalised to rack's. A request's flows complete when its reducer has
/// the aggregated result (the request's completion, what its application waits for).
/// </summary>
public static class NetAggWorkloadSweep
{
    public static readonly IReadOnlyList<string> AllDesigns = ["rack", "binary", "chain", "netagg"];

    /// <summary>
    /// The paper's numbers at α = 10 % (§4.1), each design's 99th-percentile FCT over rack's: "NetAgg reduces the 99th
    /// FCT compared to rack by 88 % (by 80 % and 52 % for binary and chain, respectively)".
    /// </summary>
    public static readonly IReadOnlyDictionary<string, double> PaperOverRack = new Dictionary<string, double>(StringComparer.Ordinal)
    {
        ["rack"] = 1,
        ["binary"] = 0.20,
        ["chain"] = 0.48,
        ["netagg"] = 0.12,
    };

    private const ulong JobIdBase = 0xFC70_0000_0000_0000UL;

    /// <summary>Runs the sweep; every run's counters go to <paramref name="runs"/> when given.</summary>
    public static IReadOnlyList<FlowCompletion> Run(NetAggWorkloadSweepOptions options, IProgress<string>? progress = null, ICollection<WorkloadRun>? runs = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentOutOfRangeException.ThrowIfLessThan(options.Trials, 1);
        if (options.Designs.Count == 0 || options.Designs.Any(d => !AllDesigns.Contains(d)))
        {
            throw new ArgumentException($"designs are {string.Join(", ", AllDesigns)}");
        }
        var rows = new List<FlowCompletion>();
        for (int trial = 0; trial < options.Trials; trial++)
        {
            var workload = options.Workload with { Seed = options.Workload.Seed + (ulong)trial };
            var groups = NetAggWorkload.Generate(workload);
            var jobs = groups.Select(g => JobFor(workload, g, trial, options.Verify, options.Racks, Aggregation.Rack) with
            {
                Tcp = options.Tcp,
                TcpSendBufferBytes = options.TcpSendBufferBytes,
                Direct = options.Direct,
            }).ToList();
            var inputs = new List<JobSimulationInput>();
            try
            {
                foreach (var (job, g) in jobs.Zip(groups))
                {
                    inputs.Add(JobSimulationInput.Prepare(job, keepInputs: options.Verify, name: string.Create(CultureInfo.InvariantCulture, $"flows-{trial}-{g.Index}")));
                }
                foreach (string design in options.Designs)
                {
                    progress?.Report(string.Create(CultureInfo.InvariantCulture,
                        $"trial {trial + 1}/{options.Trials}, {design}: {groups.Count(g => g.Aggregatable)} requests and {groups.Count(g => !g.Aggregatable)} background flows"));
                    var network = design == "netagg" ? options.Racks with { Kind = NetworkKind.NetAgg } : options.Racks;
                    var aggregation = design switch { "binary" => Aggregation.Binary, "chain" => Aggregation.Chain, "netagg" => Aggregation.Direct, _ => Aggregation.Rack };
                    var placed = jobs.Select(j => j with { Network = network, Aggregation = aggregation }).ToList();
                    var result = ConcurrentJobSimulation.RunTogether(placed, inputs);
                    if (!result.Completed)
                    {
                        throw new InvalidOperationException($"trial {trial}, {design}: the flows did not all complete: {string.Join("; ", result.Errors)}");
                    }
                    runs?.Add(new WorkloadRun(design, trial, result.Timeouts, result.Tcp?.SwitchDrops ?? 0));
                    foreach (var (outcome, g) in result.Jobs!.Zip(groups))
                    {
                        rows.Add(new FlowCompletion(design, trial, g.Index, g.Aggregatable, g.Workers.Count, g.BytesPerWorker, outcome.IntermediateBytes,
                            outcome.OutputBytes, outcome.ShuffleReduceSeconds, outcome.Verified));
                    }
                }
            }
            finally
            {
                foreach (var input in inputs)
                {
                    input.Dispose();
                }
            }
        }
        return rows;
    }

    /// <summary>The job of one request (the synthetic job at its α) or background flow (sort, one map server, sent straight to its reducer).</summary>
    internal static JobSimulationOptions JobFor(NetAggWorkloadOptions workload, FlowGroup group, int trial, bool verify, SwitchedNetworkOptions network, Aggregation aggregation) => new()
    {
        Torus = workload.Torus,
        Settings = new SimulationSettings { BytesPerServer = group.BytesPerWorker, Seed = (workload.Seed * 100_003) + (ulong)group.Index, Verify = verify },
        Workload = group.Aggregatable ? Workload.Synthetic : Workload.Sort,
        OutputRatio = group.OutputRatio,
        ReduceTasks = 1,
        Mode = ShuffleMode.Tcp,
        Network = network,
        Aggregation = aggregation,
        Aggregated = group.Aggregatable,
        MapServers = group.Workers,
        Roots = [group.Reducer],
        JobId = JobIdBase + ((ulong)trial << 20) + (ulong)group.Index,
        MapParallelism = 1,
    };

    /// <summary>Per design: the flows' completion times, each request's counted once per worker.</summary>
    public static IReadOnlyList<DesignSummary> Summarize(IReadOnlyList<FlowCompletion> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var summaries = new List<DesignSummary>();
        foreach (var design in rows.Select(r => r.Design).Distinct())
        {
            var mine = rows.Where(r => r.Design == design).ToList();
            double p99 = Percentile(mine, 0.99);
            summaries.Add(new DesignSummary(design, mine.Sum(r => r.Flows), Percentile(mine, 0.5), p99, null,
                Percentile([.. mine.Where(r => r.Aggregatable)], 0.99), Percentile([.. mine.Where(r => !r.Aggregatable)], 0.99)));
        }
        var rack = summaries.FirstOrDefault(s => s.Design == "rack");
        return [.. summaries.Select(s => s with { P99OverRack = rack is { P99Seconds: > 0 } ? s.P99Seconds / rack.P99Seconds : null })];
    }

    /// <summary>The nearest-rank percentile <paramref name="q"/> of the flows' completion times (NaN without flows).</summary>
    public static double Percentile(IReadOnlyList<FlowCompletion> rows, double q)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var times = rows.SelectMany(r => Enumerable.Repeat(r.Seconds, r.Flows)).Order().ToList();
        return times.Count == 0 ? double.NaN : times[Math.Clamp((int)Math.Ceiling(q * times.Count) - 1, 0, times.Count - 1)];
    }

    /// <summary>The rows of a netagg-fct.csv that <see cref="Write"/> wrote.</summary>
    public static IReadOnlyList<FlowCompletion> ReadCsv(string path)
    {
        var (header, rows) = CsvTable.Read(path);
        int Column(string name) => header.IndexOf(name) is >= 0 and var i ? i : throw new FormatException($"no column {name}");
        int design = Column("design"), trial = Column("trial"), group = Column("group"), aggregatable = Column("aggregatable"), flows = Column("flows"),
            bytes = Column("bytes_per_worker"), intermediate = Column("intermediate_bytes"), output = Column("output_bytes"), fct = Column("fct_s"),
            verified = Column("verified");
        return [.. rows.Select(r => new FlowCompletion(r[design], int.Parse(r[trial], CultureInfo.InvariantCulture), int.Parse(r[group], CultureInfo.InvariantCulture),
            bool.Parse(r[aggregatable]), int.Parse(r[flows], CultureInfo.InvariantCulture), long.Parse(r[bytes], CultureInfo.InvariantCulture),
            long.Parse(r[intermediate], CultureInfo.InvariantCulture), long.Parse(r[output], CultureInfo.InvariantCulture),
            double.Parse(r[fct], CultureInfo.InvariantCulture), r[verified].Length == 0 ? null : bool.Parse(r[verified])))];
    }

    /// <summary>
    /// Writes netagg-fct.csv (every request and flow), netagg-fct-summary.csv, netagg-fct-runs.csv (each run's
    /// counters, when given) and netagg-fct.svg; returns their paths.
    /// </summary>
    public static IReadOnlyList<string> Write(string directory, IReadOnlyList<FlowCompletion> rows, IReadOnlyList<DesignSummary> summaries, string cube,
        IReadOnlyList<WorkloadRun>? runs = null)
    {
        ArgumentNullException.ThrowIfNull(rows);
        ArgumentNullException.ThrowIfNull(summaries);
        Directory.CreateDirectory(directory);
        var all = new CsvTable("design", "trial", "group", "aggregatable", "flows", "bytes_per_worker", "intermediate_bytes", "output_bytes", "fct_s", "verified");
        foreach (var r in rows)
        {
            all.Add(r.Design, r.Trial, r.Group, r.Aggregatable, r.Flows, r.BytesPerWorker, r.IntermediateBytes, r.OutputBytes, r.Seconds,
                r.Verified is { } v ? v.ToString() : "");
        }
        var summary = new CsvTable("design", "flows", "median_fct_s", "p99_fct_s", "p99_over_rack", "aggregatable_p99_s", "background_p99_s", "paper_p99_over_rack");
        foreach (var s in summaries)
        {
            summary.Add(s.Design, s.Flows, s.MedianSeconds, s.P99Seconds, s.P99OverRack ?? double.NaN, s.AggregatableP99Seconds, s.BackgroundP99Seconds,
                PaperOverRack.GetValueOrDefault(s.Design, double.NaN));
        }
        string csv = Path.Combine(directory, "netagg-fct.csv"), summaryCsv = Path.Combine(directory, "netagg-fct-summary.csv");
        all.Save(csv);
        summary.Save(summaryCsv);
        var written = new List<string> { csv, summaryCsv };
        if (runs is not null)
        {
            var table = new CsvTable("design", "trial", "tcp_timeouts", "switch_drops");
            foreach (var r in runs)
            {
                table.Add(r.Design, r.Trial, r.Timeouts, r.SwitchDrops);
            }
            string runsCsv = Path.Combine(directory, "netagg-fct-runs.csv");
            table.Save(runsCsv);
            written.Add(runsCsv);
        }
        var chart = new BarChart
        {
            Title = $"NetAgg paper, Figure 8 at α = 10 %: 99th-percentile flow completion time against rack ({cube})",
            YLabel = "99th-percentile FCT / rack's",
            Categories = [.. summaries.Select(s => s.Design)],
            Guide = 1,
        };
        chart.Series.Add(new BarSeries("simulated", [.. summaries.Select(s => s.P99OverRack ?? double.NaN)]));
        chart.Series.Add(BarSeries.Paper("NetAgg paper (1,024 servers)", [.. summaries.Select(s => PaperValue.Exact(PaperOverRack.GetValueOrDefault(s.Design, double.NaN)))]));
        return [.. written, .. chart.Save(Path.Combine(directory, "netagg-fct.svg"))];
    }
}
