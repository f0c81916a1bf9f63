using Camdoop.Experiments;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

public sealed class Table1Tests
{
    /// <summary>
    /// The simulated Table 1 on a small cube: Sort and WordCount at R = 1 and R = N in both modes, every output equal to
    /// the single-process reference (JobSimulation's verification), and the paper's shapes: Sort has nothing to
    /// aggregate (the same bytes in both modes), WordCount shuffles fewer bytes with aggregation.
    /// </summary>
    [Fact]
    public void SortAndWordCountInBothModesEqualTheReferenceAndHaveThePapersShape()
    {
        var torus = new Torus(2, 2, 3);
        var progress = new List<SweepProgress>();
        var rows = Table1.Run(torus, new Table1Options { SortBytesPerServer = 30_000, WordCountBytesPerServer = 30_000, Parallelism = 2 },
            new SynchronousProgress<SweepProgress>(progress.Add));
        Assert.Equal(12, rows.Count); // 2 jobs x 2 R x 3 modes (two on the torus, TCP Camdoop on a switch)
        Assert.Equal(12, progress.Count);
        Assert.Equal([1, 1, 1, 12, 12, 12, 1, 1, 1, 12, 12, 12], rows.Select(r => r.ReduceTasks));
        Assert.Equal(["noagg", "camdoop", "tcp"], rows.Take(3).Select(r => r.Mode));
        Assert.All(rows, r => Assert.True(r.Verified, $"{r.Job} R={r.ReduceTasks} {r.Mode}"));
        Assert.All(rows, r => Assert.True(r.ShuffleReduceSeconds > 0));
        foreach (int r in new[] { 1, 12 })
        {
            var sortNoAgg = rows.Single(x => x.Job == "sort" && x.ReduceTasks == r && x.Mode == "noagg");
            var sortCamdoop = rows.Single(x => x.Job == "sort" && x.ReduceTasks == r && x.Mode == "camdoop");
            Assert.Equal(sortNoAgg.ShuffleBytes, sortCamdoop.ShuffleBytes);
            Assert.Equal(sortNoAgg.OutputBytes, sortCamdoop.OutputBytes);
            var wcNoAgg = rows.Single(x => x.Job == "wordcount" && x.ReduceTasks == r && x.Mode == "noagg");
            var wcCamdoop = rows.Single(x => x.Job == "wordcount" && x.ReduceTasks == r && x.Mode == "camdoop");
            Assert.True(wcCamdoop.ShuffleBytes < wcNoAgg.ShuffleBytes, $"R={r}: {wcCamdoop.ShuffleBytes} vs {wcNoAgg.ShuffleBytes}");
            Assert.Equal(wcNoAgg.OutputBytes, wcCamdoop.OutputBytes);
            var wcTcp = rows.Single(x => x.Job == "wordcount" && x.ReduceTasks == r && x.Mode == "tcp");
            Assert.Equal(wcNoAgg.OutputBytes, wcTcp.OutputBytes);
        }

        var csv = Table1.ToCsv(rows).Render().Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(13, csv.Length);
        Assert.Equal("job,reduceTasks,mode,run,shuffleReduceSeconds,jobSeconds,inputBytes,intermediateBytes,outputBytes,shuffleBytes,verified,paperSeconds", csv[0]);
        // The paper's numbers are given where its R matches (R = 1 here; its R = 27 is another cube's).
        Assert.EndsWith(",13.59", csv[1], StringComparison.Ordinal);
        Assert.EndsWith(",49.24", csv[3], StringComparison.Ordinal);
        Assert.EndsWith(",", csv[4], StringComparison.Ordinal);

        string md = Table1.ToMarkdown(rows, "simulated");
        var lines = md.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal("| shuffle and reduce time (s) | Sort R=1 | Sort R=12 | WordCount R=1 | WordCount R=12 |", lines[0]);
        Assert.Contains("| Camdoop, the paper | 14.08 | – | 1.670 | – |", lines);
        Assert.Contains("| outputs equal to the reference | 3/3 | 3/3 | 3/3 | 3/3 |", lines);
        Assert.Contains("| TCP Camdoop, the paper | 49.24 | – | 3.820 | – |", lines);
        Assert.Contains(lines, l => l.StartsWith("| TCP Camdoop (switch), simulated |", StringComparison.Ordinal));
        var camdoopRow = lines.Single(l => l.StartsWith("| Camdoop, simulated |", StringComparison.Ordinal));
        Assert.Contains(rows[1].ShuffleReduceSeconds.ToString("0.0000", System.Globalization.CultureInfo.InvariantCulture), camdoopRow, StringComparison.Ordinal);
    }

    [Fact]
    public void TheMarkdownTableShowsTheMedianOfRepeatedRunsAndCountsOutputsThatDiffer()
    {
        Table1Row Row(double seconds, bool verified, int run) => new("wordcount", 1, "camdoop", seconds, 1, 1, 1, 1, verified, double.NaN, run);
        var rows = new List<Table1Row> { Row(3, true, 1), Row(1, false, 2), Row(2, true, 3) };
        rows.Add(new Table1Row("wordcount", 1, "noagg", 4, 1, 1, 1, 1, true));
        string md = Table1.ToMarkdown(rows, "testbed");
        Assert.Contains("| Camdoop, testbed | 2.000 (1.000-3.000) |", md, StringComparison.Ordinal);
        Assert.Contains("| no agg. / Camdoop, testbed | 2.00x |", md, StringComparison.Ordinal);
        Assert.Contains("| no agg. / Camdoop, the paper | 1.67x |", md, StringComparison.Ordinal);
        Assert.Contains("| outputs equal to the reference | 3/4 |", md, StringComparison.Ordinal);
    }
}
