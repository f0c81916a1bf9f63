using System.Globalization;
using Camdoop.Experiments.Reports;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;

namespace Camdoop.Experiments;

/// <summary>How the Figure 8 sweep runs: the jobs' size, seed, mode and the cube's settings.</summary>
public sealed record ConcurrencySweepOptions
{
    /// <summary>
    /// What every job shares: input per server, seed (copy k generates its data from seed + k), servers, trees, compute model,
    /// and whether every job's output is checked against the single-process reference over its own input.
    /// </summary>
    public SimulationSettings Settings { get; init; } = new();

    /// <summary>Copies of the job that run at once (the paper's two).</summary>
    public int Jobs { get; init; } = 2;

    public ShuffleMode Mode { get; init; } = ShuffleMode.Camdoop;

    /// <summary>Threads for each simulation; 0 = every core (the results do not depend on it).</summary>
    public int Parallelism { get; init; }
}

/// <summary>One job of one configuration of the Figure 8 sweep: its time at once, alone, and their ratio.</summary>
public sealed record ConcurrencySweepRow(
    string Placement,
    int ReduceTasks,
    int Job,
    int MapServers,
    long IntermediateBytes,
    double AloneSeconds,
    double TogetherSeconds,
    double NormalizedTime,
    bool Completed,
    bool? Verified,
    double SimulationCpuSeconds);

/// <summary>
/// Reproduces Figure 8 of the paper in simulation: copies of the synthetic job at S = 1 (the worst case) start at once,
/// horizontally partitioned at R = 1 and R = N (normalised to one copy alone on the whole cube) and vertically at R = 1
/// and R = N / K per job, each copy on N / K servers of its own chosen from the seed (normalised to one copy alone on
/// its servers). Each copy has its own data.
/// </summary>
public static class ConcurrencySweep
{
    /// <summary>
    /// The normalised times the paper reports in its text for two jobs on its 27-server testbed (§5.3): horizontal
    /// R = 1 "at most 1.07", R = 27 "the time doubles", vertical R = 1 "approximately as long", R = 13 "up to 1.47".
    /// The two numbers it states are exact; "doubles" and "approximately as long" are approximate (2 and 1, within
    /// <see cref="PaperValue.AboutTolerance"/>).
    /// </summary>
    public static readonly PaperValue[] PaperTwoJobs = [PaperValue.Exact(1.07), PaperValue.About(2.0), PaperValue.About(1.0), PaperValue.Exact(1.47)];

    /// <summary>The configurations in the paper's order: (placement, R per job).</summary>
    public static IReadOnlyList<(JobPartitioning Placement, int ReduceTasks)> Configurations(Torus torus, int jobs)
    {
        ArgumentNullException.ThrowIfNull(torus);
        int each = torus.Count / jobs;
        return [(JobPartitioning.Horizontal, 1), (JobPartitioning.Horizontal, torus.Count), (JobPartitioning.Vertical, 1), (JobPartitioning.Vertical, each)];
    }

    public static IReadOnlyList<ConcurrencySweepRow> Run(Torus torus, ConcurrencySweepOptions? options = null, IProgress<SweepProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(torus);
        options ??= new ConcurrencySweepOptions();
        if (options.Jobs < 2 || options.Jobs > torus.Count)
        {
            throw new ArgumentException($"Figure 8 runs between 2 and {torus.Count} jobs at once on {torus}");
        }
        var configurations = Configurations(torus, options.Jobs);
        var rows = new List<ConcurrencySweepRow>();
        int done = 0;
        foreach (var (placement, r) in configurations)
        {
            string name = Name(placement, r);
            progress?.Report(new SweepProgress(done, configurations.Count, name));
            var job = new JobSimulationOptions
            {
                Torus = torus,
                Workload = Workload.Synthetic,
                OutputRatio = 1,
                Settings = options.Settings,
                ReduceTasks = r,
                Mode = options.Mode,
                SimulationThreads = options.Parallelism,
            };
            var result = ConcurrentJobSimulation.Run(ConcurrentPlacement.Copies(job, options.Jobs, placement));
            foreach (var j in result.Jobs!)
            {
                rows.Add(new ConcurrencySweepRow(Label(placement), r, j.Index, j.MapServers.Count, j.IntermediateBytes, j.AloneSeconds!.Value,
                    j.ShuffleReduceSeconds, j.NormalizedTime!.Value, j.Completed, j.Verified, result.SimulationCpuSeconds));
            }
            progress?.Report(new SweepProgress(++done, configurations.Count, name));
        }
        return rows;
    }

    public static CsvTable ToCsv(IEnumerable<ConcurrencySweepRow> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var table = new CsvTable("placement", "R", "job", "map_servers", "intermediate_bytes", "alone_s", "together_s", "normalized",
            "completed", "verified", "simulation_cpu_s");
        foreach (var r in rows)
        {
            table.Add(r.Placement, r.ReduceTasks, r.Job, r.MapServers, r.IntermediateBytes, r.AloneSeconds, r.TogetherSeconds, r.NormalizedTime,
                r.Completed, r.Verified?.ToString() ?? "", r.SimulationCpuSeconds);
        }
        return table;
    }

    /// <summary>The rows of a CSV that <see cref="ToCsv"/> wrote, for drawing its chart again.</summary>
    public static IReadOnlyList<ConcurrencySweepRow> ReadCsv(string path)
    {
        var (header, records) = CsvTable.Read(path);
        int Col(string name) => header.IndexOf(name) is var i and >= 0 ? i : throw new FormatException($"{path}: no column '{name}'");
        double D(string[] r, string name) => double.Parse(r[Col(name)], NumberStyles.Float, CultureInfo.InvariantCulture);
        long L(string[] r, string name) => long.Parse(r[Col(name)], NumberStyles.Integer, CultureInfo.InvariantCulture);
        return [.. records.Select(r => new ConcurrencySweepRow(r[Col("placement")], (int)L(r, "R"), (int)L(r, "job"), (int)L(r, "map_servers"),
            L(r, "intermediate_bytes"), D(r, "alone_s"), D(r, "together_s"), D(r, "normalized"), bool.Parse(r[Col("completed")]),
            r[Col("verified")].Length > 0 ? bool.Parse(r[Col("verified")]) : null, D(r, "simulation_cpu_s")))];
    }

    /// <summary>Each job's normalised time per configuration, the paper's two-job numbers beside them.</summary>
    public static BarChart Chart(IReadOnlyList<ConcurrencySweepRow> rows, Torus torus, string? variant = null)
    {
        ArgumentNullException.ThrowIfNull(rows);
        ArgumentNullException.ThrowIfNull(torus);
        var configurations = rows.Select(r => (r.Placement, r.ReduceTasks)).Distinct().ToList();
        int jobs = rows.Max(r => r.Job) + 1;
        var chart = new BarChart
        {
            Title = string.Create(CultureInfo.InvariantCulture, $"Figure 8: {jobs} jobs at once ({torus}, S=1{(string.IsNullOrEmpty(variant) ? "" : ", " + variant)})"),
            YLabel = "shuffle and reduce time / one job alone",
            Categories = [.. configurations.Select(c => $"{c.Placement} R={c.ReduceTasks}")],
            Guide = 1,
        };
        for (int k = 0; k < jobs; k++)
        {
            chart.Series.Add(new BarSeries($"job {k}", [.. configurations.Select(c =>
                rows.FirstOrDefault(r => r.Placement == c.Placement && r.ReduceTasks == c.ReduceTasks && r.Job == k)?.NormalizedTime ?? double.NaN)]));
        }
        if (jobs == 2 && configurations.Count == PaperTwoJobs.Length)
        {
            chart.Series.Add(BarSeries.Paper("paper (testbed, 27)", PaperTwoJobs));
        }
        return chart;
    }

    private static string Label(JobPartitioning placement) => placement == JobPartitioning.Horizontal ? "horizontal" : "vertical";

    private static string Name(JobPartitioning placement, int reduceTasks) =>
        string.Create(CultureInfo.InvariantCulture, $"{Label(placement)} R={reduceTasks}");
}
