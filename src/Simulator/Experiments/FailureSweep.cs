using System.Globalization;
using Camdoop.Experiments.Reports;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;

namespace Camdoop.Experiments;

/// <summary>What the Figure 9 sweep fails, when, and how it runs.</summary>
public sealed record FailureSweepOptions
{
    /// <summary>
    /// What every run shares: input per server, seed (it also picks the random servers to fail), servers, trees, compute
    /// model, and whether every failure run's output is checked against the single-process reference.
    /// </summary>
    public SimulationSettings Settings { get; init; } = new();

    /// <summary>When each failure strikes, as fractions of the failure-free time T (the paper's 0.25, 0.5 and 0.75).</summary>
    public IReadOnlyList<double> Fractions { get; init; } = [0.25, 0.5, 0.75];

    /// <summary>R values; at R = 1 the root, a neighbour of it and a random server fail in turn, at larger R a random one.</summary>
    public IReadOnlyList<int>? ReduceTasks { get; init; }

    /// <summary>Cores to use: failure runs of one R go side by side, one core each; 0 = every core.</summary>
    public int Parallelism { get; init; }

    /// <summary>Memory the runs may use together (0: no limit): fewer runs go side by side when they would not fit.</summary>
    public long MemoryBytes { get; init; }

    /// <summary>
    /// At R = 1 also fail the root of the job with replicated output (<see cref="FailureSweep.ReplicatedRoot"/>), against
    /// that job's own failure-free time.
    /// </summary>
    public bool ReplicatedOutput { get; init; }
}

/// <summary>One run of the Figure 9 sweep: what failed when, the time against the failure-free T, and what recovery cost.</summary>
public sealed record FailureSweepRow(
    int ReduceTasks,
    string Failed,
    string Server,
    double AtFractionOfT,
    double BaselineSeconds,
    double ShuffleReduceSeconds,
    double Stretch,
    double? DetectionSeconds,
    long ResentBytes,
    long MapTasksRerun,
    long VerticesAdopted,
    bool Completed,
    bool? Verified,
    double SimulationCpuSeconds);

/// <summary>
/// Reproduces Figure 9 of the paper in simulation: the synthetic job at S = 1 (the worst case) runs once without
/// failures (its time is T, servers sending their liveness beacons as real nodes do), then once per failure on the
/// same map outputs: at R = 1 the root, a neighbour of the root and a random server (neither), at larger R a random
/// server, each failed at the given fractions of T. Servers detect the failure by its missing beacons and recover
/// (the Camdoop paper, §4.2); the stretch is the shuffle-and-reduce time over T.
/// </summary>
public static class FailureSweep
{
    /// <summary>The targets failed at R = 1, in the paper's order.</summary>
    public static readonly string[] OneReducerTargets = ["root", "root-neighbour", "random"];

    /// <summary>The target of the runs whose root replicates its output (beyond the paper).</summary>
    public const string ReplicatedRoot = "root-replicated";

    /// <summary>The stretches the paper quotes (testbed, 27 servers, R = 1, root failed): 1.36 at 0.25T, 1.83 at 0.75T.</summary>
    public static readonly (double At, double Stretch)[] PaperRootStretch = [(0.25, 1.36), (0.75, 1.83)];

    /// <summary>
    /// How many failure runs fit side by side: the shared input once, then each run's shuffle state and, when it
    /// verifies, its reference (measured on 8x8x8 at 2 MB per server: two verified runs at R = 1 outgrew 23 GB).
    /// </summary>
    private static int SideBySide(int servers, int reduceTasks, FailureSweepOptions options, int parallelism)
    {
        if (options.MemoryBytes <= 0)
        {
            return parallelism;
        }
        long budget = (options.Settings.Service ?? new CamdoopServiceOptions()).MemoryBudgetBytes;
        long input = servers * options.Settings.BytesPerServer;
        long shared = JobMemoryEstimate.InputBytes(servers, options.Settings.BytesPerServer, mapOutputOnDisk: false) + (options.Settings.Verify ? input : 0);
        long perRun = JobMemoryEstimate.ShuffleBytes(servers, reduceTasks, budget) + (options.Settings.Verify ? 12 * input : 2 * input);
        return JobMemoryEstimate.RunsThatFit(options.MemoryBytes, shared, perRun, parallelism);
    }

    public static IReadOnlyList<FailureSweepRow> Run(Torus torus, FailureSweepOptions? options = null, IProgress<SweepProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(torus);
        options ??= new FailureSweepOptions();
        var rs = options.ReduceTasks ?? [1, torus.Count];
        List<FailureRequest> At(string what) =>
            options.Fractions.Select(at => FailureRequest.Parse(string.Create(CultureInfo.InvariantCulture, $"{what}@{at}T"))).ToList();
        var plans = rs.Select(r => (R: r, Replicated: false, Failures: (r == 1 ? OneReducerTargets : ["random"]).SelectMany(At).ToList())).ToList();
        if (options.ReplicatedOutput && rs.Contains(1))
        {
            plans.Insert(plans.FindIndex(p => p.R == 1) + 1, (1, true, At("root")));
        }
        int total = plans.Sum(p => 1 + p.Failures.Count);
        int done = 0;
        int parallelism = options.Parallelism > 0 ? options.Parallelism : Environment.ProcessorCount;
        var rows = new List<FailureSweepRow>();
        foreach (var (r, replicated, failures) in plans)
        {
            var jobOptions = new JobSimulationOptions
            {
                ReplicateOutput = replicated,
                Torus = torus,
                Workload = Workload.Synthetic,
                OutputRatio = 1,
                // The failure-free run is the baseline only: the failure runs are the ones checked.
                Settings = options.Settings with { Verify = false },
                ReduceTasks = r,
                NodeBeacons = true,
                SimulationThreads = 1,
            };
            progress?.Report(new SweepProgress(done, total, $"R={r}: map"));
            using var input = JobSimulationInput.Prepare(jobOptions, keepInputs: options.Settings.Verify);
            progress?.Report(new SweepProgress(done, total, $"R={r}: without failures"));
            var baseline = JobSimulation.Run(jobOptions with { SimulationThreads = parallelism }, input);
            if (!baseline.Completed)
            {
                throw new InvalidOperationException($"R={r}: the job did not complete without failures: {string.Join("; ", baseline.Errors)}");
            }
            progress?.Report(new SweepProgress(++done, total, $"R={r}: failures"));
            long t = (long)Math.Round(baseline.ShuffleReduceSeconds * 1e9);
            int sideBySide = SideBySide(torus.Count, r, options, parallelism);
            var placement = new JobPlacement(torus, jobOptions.JobId, r, options.Settings.Trees);
            var results = new FailureSweepRow[failures.Count];
            Parallel.For(0, failures.Count, new ParallelOptions { MaxDegreeOfParallelism = sideBySide }, i =>
            {
                var request = failures[i];
                var failure = request.Resolve(torus, placement, (int)options.Settings.Seed, t);
                var result = JobSimulation.Run(jobOptions with { Failures = [failure], Settings = options.Settings }, input);
                var report = result.Failures.Count > 0 ? result.Failures[0] : null;
                results[i] = new FailureSweepRow(r, replicated ? ReplicatedRoot : request.What, failure.Target, request.FractionOfT!.Value, baseline.ShuffleReduceSeconds,
                    result.ShuffleReduceSeconds, result.ShuffleReduceSeconds / baseline.ShuffleReduceSeconds,
                    report?.DetectedAtSeconds - report?.AtSeconds, result.Recovery?.ResentBytes ?? 0, result.Recovery?.MapTasksRerun ?? 0,
                    result.Recovery?.VerticesAdopted ?? 0, result.Completed, result.Verified, result.SimulationCpuSeconds);
                int now = Interlocked.Increment(ref done);
                progress?.Report(new SweepProgress(now, total, string.Create(CultureInfo.InvariantCulture, $"R={r}: {request.What}@{request.FractionOfT}T")));
            });
            rows.AddRange(results);
        }
        return rows;
    }

    public static CsvTable ToCsv(IEnumerable<FailureSweepRow> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var table = new CsvTable("R", "failed", "server", "at", "baseline_s", "shuffle_reduce_s", "stretch",
            "detection_s", "resent_bytes", "map_tasks_rerun", "vertices_adopted", "completed", "verified", "simulation_cpu_s");
        foreach (var r in rows)
        {
            table.Add(r.ReduceTasks, r.Failed, r.Server, r.AtFractionOfT, r.BaselineSeconds, r.ShuffleReduceSeconds, r.Stretch,
                r.DetectionSeconds?.ToString("R", CultureInfo.InvariantCulture) ?? "", r.ResentBytes, r.MapTasksRerun, r.VerticesAdopted,
                r.Completed, r.Verified?.ToString() ?? "", r.SimulationCpuSeconds);
        }
        return table;
    }

    /// <summary>The rows of a CSV that <see cref="ToCsv"/> wrote, for drawing its chart again.</summary>
    public static IReadOnlyList<FailureSweepRow> ReadCsv(string path)
    {
        var (header, records) = CsvTable.Read(path);
        int Col(string name) => header.IndexOf(name) is var i and >= 0 ? i : throw new FormatException($"{path}: no column '{name}'");
        double D(string[] r, string name) => double.Parse(r[Col(name)], NumberStyles.Float, CultureInfo.InvariantCulture);
        long L(string[] r, string name) => long.Parse(r[Col(name)], NumberStyles.Integer, CultureInfo.InvariantCulture);
        return [.. records.Select(r => new FailureSweepRow((int)L(r, "R"), r[Col("failed")], r[Col("server")], D(r, "at"), D(r, "baseline_s"),
            D(r, "shuffle_reduce_s"), D(r, "stretch"), r[Col("detection_s")].Length > 0 ? D(r, "detection_s") : null, L(r, "resent_bytes"),
            L(r, "map_tasks_rerun"), L(r, "vertices_adopted"), bool.Parse(r[Col("completed")]),
            r[Col("verified")].Length > 0 ? bool.Parse(r[Col("verified")]) : null, D(r, "simulation_cpu_s")))];
    }

    /// <summary>The stretch against the failure time, one line per R and target, with the paper's root points beside them.</summary>
    public static LineChart Chart(IEnumerable<FailureSweepRow> rows, Torus torus, string? variant = null)
    {
        ArgumentNullException.ThrowIfNull(rows);
        ArgumentNullException.ThrowIfNull(torus);
        var chart = new LineChart
        {
            Title = $"Figure 9: server failure during the shuffle ({torus}, S=1{(string.IsNullOrEmpty(variant) ? "" : ", " + variant)})",
            XLabel = "failure time (fraction of T)",
            YLabel = "shuffle and reduce time / T",
            LogY = false,
        };
        foreach (var series in rows.GroupBy(r => (r.ReduceTasks, r.Failed)))
        {
            string name = string.Create(CultureInfo.InvariantCulture, $"R={series.Key.ReduceTasks}, {series.Key.Failed}");
            chart.Series.Add(new ChartSeries(name, series.OrderBy(r => r.AtFractionOfT).Select(r => (r.AtFractionOfT, r.Stretch)).ToList()));
        }
        chart.Series.Add(new ChartSeries("paper: R=1, root (testbed)", PaperRootStretch.Select(p => (p.At, p.Stretch)).ToList(), Dashed: true));
        return chart;
    }
}
