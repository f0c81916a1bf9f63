using System.Text.Json;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>--aggregation on sim run and sim sweep: the report says it, the sweep runs each, and misuse is one usage line.</summary>
public sealed class SimAggregationCommandTests
{
    [Fact]
    public void RackAggregationOnRacksReportsItAndAVerifiedOutput()
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(
            "sim", "run", "--torus", "3x3x3", "--job", "wordcount", "--input-per-server", "20KB", "--network", "racks",
            "--mode", "tcp", "--aggregation", "rack", "--min-rto", "1ms", "--verify", "--json");
        Assert.True(code == 0, stderr);
        using var doc = JsonDocument.Parse(stdout);
        var root = doc.RootElement;
        Assert.True(root.GetProperty("verified").GetBoolean());
        Assert.Equal("rack", root.GetProperty("aggregation").GetString());
        // 27 servers in one rack of 40: every stream goes to the reducer, as in the direct shuffle, each admitted.
        Assert.Equal(0, root.GetProperty("mergedBytes").GetInt64());
        Assert.Equal(2 * 26, root.GetProperty("tcp").GetProperty("connections").GetInt64());
    }

    [Fact]
    public void AChainOnASwitchMergesOnTheWayAndSaysSoInTheReport()
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(
            "sim", "run", "--torus", "2x2x3", "--job", "wordcount", "--input-per-server", "20KB", "--network", "switch",
            "--mode", "tcp", "--aggregation", "chain", "--min-rto", "1ms", "--verify");
        Assert.True(code == 0, stderr);
        Assert.Contains("chain aggregation", stdout, StringComparison.Ordinal);
        Assert.Contains("merged / forwarded on the way", stdout, StringComparison.Ordinal);
        Assert.Contains("verified", stdout, StringComparison.OrdinalIgnoreCase);
    }

    [Fact]
    public void ASweepRunsEachAggregationAndWritesItsColumn()
    {
        string dir = Directory.CreateTempSubdirectory("camdoop-aggregation-sweep-").FullName;
        try
        {
            var (code, _, stderr) = CamdoopProcess.Run(
                "sim", "sweep", "--figure", "6", "--torus", "2x2x3", "--input-per-server", "8KB", "--output-ratios", "0", "--reducers", "1",
                "--networks", "racks", "--aggregation", "direct,binary", "--min-rto", "1ms", "--out", dir);
            Assert.True(code == 0, stderr);
            var lines = File.ReadAllLines(Path.Combine(dir, "figure6.csv"));
            var header = lines[0].Split(',');
            int column = Array.IndexOf(header, "aggregation");
            Assert.True(column >= 0, lines[0]);
            Assert.Equal(["direct", "binary"], lines.Skip(1).Select(l => l.Split(',')[column]));
            Assert.Contains("TCP Camdoop (racks, binary)", File.ReadAllText(Path.Combine(dir, "figure-6-r-1.svg")), StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Theory]
    [InlineData("run", "--aggregation", "rack")]
    [InlineData("run", "--network", "racks", "--mode", "tcp", "--aggregation", "ring")]
    [InlineData("run", "--network", "racks", "--mode", "tcp", "--aggregation", "rack,chain")]
    [InlineData("sweep", "--figure", "6", "--aggregation", "rack")]
    [InlineData("sweep", "--figure", "9", "--aggregation", "chain")]
    [InlineData("sweep", "--figure", "6", "--networks", "racks", "--aggregation", "rack,tree")]
    public void MisusedAggregationFailsWithOneUsageLine(params string[] args)
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(["sim", .. args, "--torus", "2x2x3", "--input-per-server", "10KB"]);
        Assert.Equal(2, code);
        Assert.Equal("", stdout.Trim());
        var lines = stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Single(lines);
        Assert.Contains("--aggregation", lines[0], StringComparison.Ordinal);
    }
}
