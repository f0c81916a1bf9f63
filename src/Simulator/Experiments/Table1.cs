using System.Globalization;
using System.Text;
using Camdoop.Experiments.Reports;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>One cell of Table 1: a job at one R in one mode, where it ran, how long its shuffle and reduce took.</summary>
public sealed record Table1Row(
    string Job,
    int ReduceTasks,
    string Mode,
    double ShuffleReduceSeconds,
    long InputBytes,
    long IntermediateBytes,
    long OutputBytes,
    long ShuffleBytes,
    bool Verified,
    double JobSeconds = double.NaN,
    int Run = 1);

/// <summary>What the simulated Table 1 runs on.</summary>
public sealed record Table1Options
{
    /// <summary>
    /// What every run shares: seed, servers, trees and compute model. Each job's input size is its own
    /// (<see cref="SortBytesPerServer"/>, <see cref="WordCountBytesPerServer"/>), and every output is checked.
    /// </summary>
    public SimulationSettings Settings { get; init; } = new();

    /// <summary>Indy records per server for Sort (the paper: about 200 MB per server).</summary>
    public long SortBytesPerServer { get; init; } = 4 << 20;

    /// <summary>Zipf text per server for WordCount (the paper: 859 MB of Wikipedia per server).</summary>
    public long WordCountBytesPerServer { get; init; } = 4 << 20;

    /// <summary>R values (default 1 and N, the paper's).</summary>
    public IReadOnlyList<int>? ReduceTasks { get; init; }

    /// <summary>Simulation threads per run (0 = every core).</summary>
    public int Parallelism { get; init; }

    /// <summary>The switch TCP Camdoop runs on (the default: one 1 Gbps NIC per server, default buffers).</summary>
    public SwitchedNetworkOptions Switch { get; init; } = new();
}

/// <summary>
/// Table 1 of the Camdoop paper (§5.1): Sort and WordCount shuffle-and-reduce times at R = 1 and R = N, with and
/// without on-path aggregation. <see cref="Run"/> simulates it, every output checked against the single-process
/// reference; the testbed's `camdoop testbed bench table1` fills the same rows from real node processes.
/// </summary>
public static class Table1
{
    public static readonly string[] Jobs = ["sort", "wordcount"];

    /// <summary>The modes of the table: the two on the torus, and TCP Camdoop on a switch (the paper's main baseline).</summary>
    public static readonly ShuffleMode[] Modes = [ShuffleMode.NoAgg, ShuffleMode.Camdoop, ShuffleMode.Tcp];

    /// <summary>The paper's Table 1 (seconds, its 27-server testbed), by job, R and mode.</summary>
    public static readonly IReadOnlyDictionary<(string Job, int R, string Mode), double> Paper = new Dictionary<(string, int, string), double>
    {
        [("sort", 1, "noagg")] = 13.59,
        [("sort", 27, "noagg")] = 1.42,
        [("sort", 1, "camdoop")] = 14.08,
        [("sort", 27, "camdoop")] = 1.54,
        [("wordcount", 1, "noagg")] = 2.79,
        [("wordcount", 27, "noagg")] = 0.34,
        [("wordcount", 1, "camdoop")] = 1.67,
        [("wordcount", 27, "camdoop")] = 0.21,
        [("sort", 1, "tcp")] = 49.24,
        [("sort", 27, "tcp")] = 6.68,
        [("wordcount", 1, "tcp")] = 3.82,
        [("wordcount", 27, "tcp")] = 0.68,
    };

    public static IReadOnlyList<Table1Row> Run(Torus torus, Table1Options? options = null, IProgress<SweepProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(torus);
        options ??= new Table1Options();
        var rs = options.ReduceTasks ?? [1, torus.Count];
        int total = Jobs.Length * rs.Count * Modes.Length, done = 0;
        var rows = new List<Table1Row>();
        foreach (string job in Jobs)
        {
            foreach (int r in rs)
            {
                var jobOptions = new JobSimulationOptions
                {
                    Torus = torus,
                    Workload = job == "sort" ? Workload.Sort : Workload.WordCount,
                    Settings = options.Settings with
                    {
                        BytesPerServer = job == "sort" ? options.SortBytesPerServer : options.WordCountBytesPerServer,
                        Verify = true,
                    },
                    ReduceTasks = r,
                    SimulationThreads = options.Parallelism,
                };
                using var input = JobSimulationInput.Prepare(jobOptions, keepInputs: true);
                foreach (var mode in Modes)
                {
                    var result = JobSimulation.Run(jobOptions with { Mode = mode, Network = mode == ShuffleMode.Tcp ? options.Switch : null }, input);
                    rows.Add(new Table1Row(job, r, result.Mode, result.ShuffleReduceSeconds, result.InputBytes, result.IntermediateBytes,
                        result.OutputBytes, result.DataBytesSent, result.Completed && result.Verified == true));
                    progress?.Report(new SweepProgress(++done, total, string.Create(CultureInfo.InvariantCulture,
                        $"{job} R={r} {FigureSweep.ModeName(mode)}: {result.ShuffleReduceSeconds:0.####} s{(result.Verified == true ? "" : " (output differs from the reference)")}")));
                }
            }
        }
        return rows;
    }

    public static CsvTable ToCsv(IEnumerable<Table1Row> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var table = new CsvTable("job", "reduceTasks", "mode", "run", "shuffleReduceSeconds", "jobSeconds", "inputBytes", "intermediateBytes",
            "outputBytes", "shuffleBytes", "verified", "paperSeconds");
        foreach (var r in rows)
        {
            table.Add(r.Job, r.ReduceTasks, r.Mode, r.Run, r.ShuffleReduceSeconds, double.IsNaN(r.JobSeconds) ? "" : r.JobSeconds, r.InputBytes,
                r.IntermediateBytes, r.OutputBytes, r.ShuffleBytes, r.Verified,
                Paper.TryGetValue((r.Job, r.ReduceTasks, r.Mode), out double p) ? p : "");
        }
        return table;
    }

    /// <summary>
    /// The table as Markdown, laid out like the paper's: a column per job and R, a row per mode (the median over runs,
    /// with the spread, lowest to highest, when there were several),
    /// the ratio no agg. over Camdoop, and the paper's rows beside them.
    /// </summary>
    public static string ToMarkdown(IReadOnlyList<Table1Row> rows, string where)
    {
        ArgumentNullException.ThrowIfNull(rows);
        var columns = rows.Select(r => (r.Job, r.ReduceTasks)).Distinct().OrderBy(c => Array.IndexOf(Jobs, c.Job)).ThenBy(c => c.ReduceTasks).ToList();
        var sb = new StringBuilder();
        sb.Append("| shuffle and reduce time (s) |");
        foreach (var (job, r) in columns)
        {
            sb.Append(CultureInfo.InvariantCulture, $" {(job == "sort" ? "Sort" : "WordCount")} R={r} |");
        }
        sb.Append('\n').Append("|---|").Append(string.Concat(Enumerable.Repeat("---|", columns.Count))).Append('\n');
        double? Median(string job, int r, string mode)
        {
            var times = rows.Where(x => x.Job == job && x.ReduceTasks == r && x.Mode == mode).Select(x => x.ShuffleReduceSeconds).Order().ToList();
            return times.Count == 0 ? null : times.Count % 2 == 1 ? times[times.Count / 2] : (times[(times.Count / 2) - 1] + times[times.Count / 2]) / 2;
        }
        void Row(string label, Func<string, int, string> cell)
        {
            sb.Append("| ").Append(label).Append(" |");
            foreach (var (job, r) in columns)
            {
                sb.Append(' ').Append(cell(job, r)).Append(" |");
            }
            sb.Append('\n');
        }
        static string Seconds(double? s) => s is { } v ? v.ToString(v >= 10 ? "0.00" : v >= 0.1 ? "0.000" : "0.0000", CultureInfo.InvariantCulture) : "–";
        // The median, and the spread over runs when there were several.
        string Measured(string job, int r, string mode)
        {
            var times = rows.Where(x => x.Job == job && x.ReduceTasks == r && x.Mode == mode).Select(x => x.ShuffleReduceSeconds).ToList();
            string median = Seconds(Median(job, r, mode));
            return times.Count > 1 ? $"{median} ({Seconds(times.Min())}-{Seconds(times.Max())})" : median;
        }
        static string Ratio(double? a, double? b) => a is { } x && b is { } y && y > 0 ? (x / y).ToString("0.00", CultureInfo.InvariantCulture) + "x" : "–";
        double? PaperOf(string job, int r, string mode) => Paper.TryGetValue((job, r, mode), out double p) ? p : null;
        Row($"Camdoop (no agg.), {where}", (j, r) => Measured(j, r, "noagg"));
        Row($"Camdoop, {where}", (j, r) => Measured(j, r, "camdoop"));
        Row($"no agg. / Camdoop, {where}", (j, r) => Ratio(Median(j, r, "noagg"), Median(j, r, "camdoop")));
        Row($"TCP Camdoop (switch), {where}", (j, r) => Measured(j, r, "tcp"));
        Row($"TCP Camdoop / Camdoop, {where}", (j, r) => Ratio(Median(j, r, "tcp"), Median(j, r, "camdoop")));
        Row("Camdoop (no agg.), the paper", (j, r) => Seconds(PaperOf(j, r, "noagg")));
        Row("Camdoop, the paper", (j, r) => Seconds(PaperOf(j, r, "camdoop")));
        Row("no agg. / Camdoop, the paper", (j, r) => Ratio(PaperOf(j, r, "noagg"), PaperOf(j, r, "camdoop")));
        Row("TCP Camdoop, the paper", (j, r) => Seconds(PaperOf(j, r, "tcp")));
        Row("TCP Camdoop / Camdoop, the paper", (j, r) => Ratio(PaperOf(j, r, "tcp"), PaperOf(j, r, "camdoop")));
        Row("outputs equal to the reference", (j, r) =>
        {
            var cells = rows.Where(x => x.Job == j && x.ReduceTasks == r).ToList();
            return $"{cells.Count(x => x.Verified)}/{cells.Count}";
        });
        return sb.ToString();
    }
}
