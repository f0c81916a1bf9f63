using System.Text.Json;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>sim run --network netagg: the agg boxes in the report, and every NetAgg flag error as one line.</summary>
public sealed class SimNetAggCommandTests
{
    [Fact]
    public void NetAggReportsEachBoxAndAVerifiedOutput()
    {
        // 12 servers are one rack of 40: one box, on the rack's switch, and no core.
        var (code, stdout, stderr) = CamdoopProcess.Run(
            "sim", "run", "--torus", "2x2x3", "--job", "wordcount", "--reducers", "2", "--input-per-server", "40KB",
            "--network", "netagg", "--mode", "tcp", "--agg-trees", "2", "--agg-rate", "5", "--verify", "--json");
        Assert.True(code == 0, stderr);
        using var doc = JsonDocument.Parse(stdout);
        var root = doc.RootElement;
        Assert.True(root.GetProperty("verified").GetBoolean());
        Assert.Equal("netagg", root.GetProperty("network").GetString());
        Assert.Equal("netagg", root.GetProperty("aggregation").GetString());
        var box = Assert.Single(root.GetProperty("aggBoxes").EnumerateArray().ToList());
        Assert.Equal("box@rack0", box.GetProperty("name").GetString());
        Assert.Equal("(2,0,0)", box.GetProperty("host").GetString());
        long merged = box.GetProperty("mergedBytes").GetInt64();
        Assert.True(merged > 0);
        // WordCount combines at the box, and its work took time at 5 Gbit/s.
        Assert.True(box.GetProperty("forwardedBytes").GetInt64() < merged);
        Assert.Equal(merged * 8 / 5e9, box.GetProperty("busySeconds").GetDouble(), 6);
    }

    [Fact]
    public void TheNetAggWorkloadSweepTabulatesEveryDesignAndWritesItsChart()
    {
        string dir = Path.Combine(Path.GetTempPath(), $"camdoop-netagg-sweep-{Environment.ProcessId}");
        try
        {
            // 64 servers (racks of 40 and 24), half of them sending, every flow's output checked.
            var (code, stdout, stderr) = CamdoopProcess.Run(
                "sim", "sweep", "--figure", "netagg", "--torus", "4x4x4", "--edge-load", "0.5", "--trials", "1",
                "--verify", "--out", dir);
            Assert.True(code == 0, stderr);
            foreach (string design in new[] { "rack", "binary", "chain", "netagg" })
            {
                Assert.Matches($@"(?m)^{design}\s+32\s+.*\s+yes$", stdout);
            }
            Assert.Contains("netagg 0.12", stdout, StringComparison.Ordinal);
            Assert.True(File.Exists(Path.Combine(dir, "netagg-fct.svg")));
            var summary = File.ReadAllLines(Path.Combine(dir, "netagg-fct-summary.csv"));
            Assert.Equal(5, summary.Length);
            Assert.StartsWith("rack,32,", summary[1], StringComparison.Ordinal);
            // One line of TCP counters per design and trial.
            Assert.Equal(5, File.ReadAllLines(Path.Combine(dir, "netagg-fct-runs.csv")).Length);
        }
        finally
        {
            if (Directory.Exists(dir))
            {
                Directory.Delete(dir, recursive: true);
            }
        }
    }

    [Fact]
    public void AFailedBoxIsReportedAndTheOutputIsStillVerified()
    {
        // One rack: the box's children (every server but the reducer) send to the reducer again once it is down.
        var (code, stdout, stderr) = CamdoopProcess.Run(
            "sim", "run", "--torus", "2x2x3", "--job", "wordcount", "--input-per-server", "200KB", "--network", "netagg",
            "--mode", "tcp", "--switch-buffer", "8MB", "--min-rto", "1ms", "--fail", "box@rack0@0.25T", "--verify", "--json");
        Assert.True(code == 0, stderr);
        using var doc = JsonDocument.Parse(stdout);
        var root = doc.RootElement;
        Assert.True(root.GetProperty("verified").GetBoolean());
        var box = Assert.Single(root.GetProperty("aggBoxes").EnumerateArray().ToList());
        Assert.True(box.GetProperty("failed").GetBoolean());
        var failure = Assert.Single(root.GetProperty("failures").EnumerateArray().ToList());
        Assert.Equal("box@rack0", failure.GetProperty("what").GetString());
        Assert.Equal("2,0,0", failure.GetProperty("server").GetString());
        Assert.True(failure.GetProperty("detectedAtSeconds").GetDouble() > failure.GetProperty("atSeconds").GetDouble());
        var recovery = root.GetProperty("recovery");
        Assert.True(recovery.GetProperty("resentBytes").GetInt64() > 0);
        Assert.True(recovery.GetProperty("stretch").GetDouble() > 1);
    }

    [Fact]
    public void AFailedBoxsRecoveryLineSpeaksOfStreamsNotMapTasks()
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(
            "sim", "run", "--torus", "2x2x3", "--job", "wordcount", "--input-per-server", "200KB", "--network", "netagg",
            "--mode", "tcp", "--switch-buffer", "8MB", "--min-rto", "1ms", "--fail", "box@rack0@0.25T");
        Assert.True(code == 0, stderr);
        string line = Assert.Single(stdout.Split('\n'), l => l.StartsWith("recovery", StringComparison.Ordinal));
        Assert.Contains("sent again (the streams that crossed the failed box)", line, StringComparison.Ordinal);
        Assert.DoesNotContain("map task", line, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--network", "netagg", "--mode", "tcp", "--aggregation", "rack")]
    [InlineData("--network", "netagg", "--mode", "tcp", "--fail", "box@core@0.25T")]
    [InlineData("--network", "netagg", "--mode", "tcp", "--fail", "box@rack9@1ms")]
    [InlineData("--network", "netagg", "--mode", "tcp", "--fail", "box@rack0@start")]
    [InlineData("--network", "netagg", "--mode", "tcp", "--fail", "root@0.5T")]
    [InlineData("--network", "racks", "--mode", "tcp", "--fail", "box@rack0@1ms")]
    [InlineData("--fail", "box@rack0@1ms")]
    [InlineData("--network", "netagg", "--mode", "tcp", "--agg-boxes", "some")]
    [InlineData("--network", "netagg", "--mode", "tcp", "--agg-trees", "7")]
    [InlineData("--network", "netagg", "--mode", "tcp", "--agg-rate", "0")]
    [InlineData("--network", "netagg", "--mode", "tcp", "--agg-link-rate", "fast")]
    [InlineData("--network", "netagg", "--mode", "camdoop")]
    [InlineData("--network", "racks", "--mode", "tcp", "--agg-boxes", "upper")]
    [InlineData("--network", "racks", "--mode", "tcp", "--agg-trees", "2")]
    [InlineData("--agg-rate", "5")]
    public void BadNetAggFlagsFailWithOneUsageLine(params string[] flags)
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(["sim", "run", "--torus", "2x2x3", "--input-per-server", "10KB", .. flags]);
        Assert.Equal(2, code);
        Assert.Equal("", stdout.Trim());
        var lines = stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Single(lines);
        Assert.StartsWith("camdoop", lines[0], StringComparison.Ordinal);
    }
}
