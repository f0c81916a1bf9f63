using System.Text.Json;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>sim run --network and --mode tcp: the report, the torus default, and every flag error as one line.</summary>
public sealed class SimTcpCommandTests
{
    [Fact]
    public void TcpModeOnASwitchReportsItsNetworkBoundsAndAVerifiedOutput()
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(
            "sim", "run", "--torus", "2x2x3", "--job", "wordcount", "--reducers", "3", "--input-per-server", "40KB",
            "--network", "switch", "--mode", "tcp", "--tcp", "dctcp", "--ecn", "64KB", "--min-rto", "1ms", "--verify", "--json");
        Assert.True(code == 0, stderr);
        using var doc = JsonDocument.Parse(stdout);
        var root = doc.RootElement;
        Assert.True(root.GetProperty("completed").GetBoolean());
        Assert.True(root.GetProperty("verified").GetBoolean());
        Assert.Equal("tcp", root.GetProperty("mode").GetString());
        Assert.Equal("switch", root.GetProperty("network").GetString());
        Assert.True(root.GetProperty("shuffleReduceSeconds").GetDouble() > 0);
        Assert.True(root.GetProperty("lowerBounds").GetProperty("switch1G").GetDouble() > 0);
        var tcp = root.GetProperty("tcp");
        Assert.Equal("dctcp", tcp.GetProperty("congestionControl").GetString());
        Assert.Equal(64 * 1024, tcp.GetProperty("ecnThresholdBytes").GetInt32());
        Assert.Equal(0.001, tcp.GetProperty("minRtoSeconds").GetDouble());
        // Every server but the reducer's opens one stream per reduce task elsewhere (12 servers, 3 reducers), each
        // after its reducer's admission, a stream of its own.
        Assert.Equal(2 * ((12 * 3) - 3), tcp.GetProperty("connections").GetInt64());
        Assert.True(tcp.GetProperty("parallelFetches").GetInt32() >= 1);
    }

    [Theory]
    [InlineData(new[] { "--push" }, 0, 33)]
    [InlineData(new[] { "--parallel-fetches", "1" }, 1, 66)]
    public void PushAndABoundOnAdmittedStreamsBothGiveTheReference(string[] flags, int fetches, long connections)
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(
            ["sim", "run", "--torus", "2x2x3", "--job", "wordcount", "--reducers", "3", "--input-per-server", "40KB",
            "--network", "switch", "--mode", "tcp", "--min-rto", "1ms", "--verify", "--json", .. flags]);
        Assert.True(code == 0, stderr);
        using var doc = JsonDocument.Parse(stdout);
        var root = doc.RootElement;
        Assert.True(root.GetProperty("verified").GetBoolean());
        var tcp = root.GetProperty("tcp");
        Assert.Equal(fetches, tcp.GetProperty("parallelFetches").GetInt32());
        Assert.Equal(connections, tcp.GetProperty("connections").GetInt64());
    }

    [Fact]
    public void TheTorusIsTheDefaultNetwork()
    {
        string[] run = ["sim", "run", "--torus", "2x2x3", "--reducers", "2", "--input-per-server", "40KB", "--json"];
        var plain = Report(run);
        var torus = Report([.. run, "--network", "torus"]);
        Assert.Equal("torus", plain.GetProperty("network").GetString());
        Assert.Equal(plain.GetProperty("shuffleReduceSeconds").GetDouble(), torus.GetProperty("shuffleReduceSeconds").GetDouble());
        Assert.Equal(plain.GetProperty("linkBytes").GetInt64(), torus.GetProperty("linkBytes").GetInt64());
        Assert.False(plain.TryGetProperty("tcp", out _));
    }

    [Theory]
    [InlineData("switch")]
    [InlineData("racks")]
    [InlineData("grin")]
    public void ASwitchedNetworkRunsTcpWithoutModeAndTheTorusCamdoop(string network)
    {
        string[] run = ["sim", "run", "--torus", "2x2x3", "--reducers", "2", "--input-per-server", "20KB", "--verify", "--json"];
        var switched = Report([.. run, "--network", network]);
        Assert.Equal("tcp", switched.GetProperty("mode").GetString());
        // grin is named with its free ports (grin1).
        Assert.StartsWith(network, switched.GetProperty("network").GetString(), StringComparison.Ordinal);
        Assert.True(switched.GetProperty("verified").GetBoolean());
        var given = Report([.. run, "--network", network, "--mode", "tcp"]);
        Assert.Equal(given.GetProperty("shuffleReduceSeconds").GetDouble(), switched.GetProperty("shuffleReduceSeconds").GetDouble());
        Assert.Equal("camdoop", Report(run).GetProperty("mode").GetString());
    }

    [Theory]
    [InlineData("--mode", "tcp")]
    [InlineData("--network", "switch", "--mode", "noagg")]
    [InlineData("--network", "ring")]
    [InlineData("--switch-buffer", "1MB")]
    [InlineData("--tcp", "dctcp")]
    [InlineData("--network", "switch", "--mode", "tcp", "--tcp", "cubic")]
    [InlineData("--network", "switch", "--mode", "tcp", "--rwnd", "1KB")]
    [InlineData("--network", "switch", "--mode", "tcp", "--min-rto", "soon")]
    [InlineData("--network", "switch", "--mode", "tcp", "--nics", "3")]
    [InlineData("--network", "switch", "--mode", "tcp", "--switch-buffer", "1KB")]
    [InlineData("--network", "switch", "--mode", "tcp", "--ecn", "1MB")]
    [InlineData("--network", "switch", "--mode", "tcp", "--streams-per-server", "0")]
    [InlineData("--network", "switch", "--mode", "tcp", "--parallel-fetches", "-1")]
    [InlineData("--network", "switch", "--mode", "tcp", "--push", "--parallel-fetches", "2")]
    [InlineData("--push")]
    [InlineData("--parallel-fetches", "2")]
    [InlineData("--network", "switch", "--mode", "tcp", "--fail", "link:0,0,0:+X@0.5T")]
    [InlineData("--network", "racks", "--mode", "tcp", "--concurrent", "2")]
    public void BadNetworkOrTcpFlagsFailWithOneUsageLine(params string[] flags)
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(["sim", "run", "--torus", "2x2x3", "--input-per-server", "10KB", .. flags]);
        Assert.Equal(2, code);
        Assert.Equal("", stdout.Trim());
        var lines = stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Single(lines);
        Assert.StartsWith("camdoop", lines[0], StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--figure", "6", "--networks", "torus,ring")]
    [InlineData("--figure", "9", "--networks", "switch")]
    [InlineData("--figure", "8", "--switch-buffer", "1MB")]
    [InlineData("--figure", "7", "--tcp", "dctcp")]
    public void BadSweepNetworkFlagsFailWithOneUsageLine(params string[] flags)
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(["sim", "sweep", "--torus", "2x2x3", .. flags]);
        Assert.Equal(2, code);
        Assert.Equal("", stdout.Trim());
        Assert.Single(stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
    }

    private static JsonElement Report(string[] args)
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(args);
        Assert.True(code == 0, stderr);
        using var doc = JsonDocument.Parse(stdout);
        return doc.RootElement.Clone();
    }
}
