using System.Text.Json;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>sim run and sim sweep --network grin --free-ports: a verified run, and every flag error as one line.</summary>
public sealed class SimGrinCommandTests
{
    [Fact]
    public void TcpModeOnGrinReportsItsDegreeAndAVerifiedOutput()
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(
            "sim", "run", "--torus", "2x2x3", "--job", "wordcount", "--reducers", "3", "--input-per-server", "40KB",
            "--network", "grin", "--free-ports", "2", "--mode", "tcp", "--min-rto", "1ms", "--verify", "--json");
        Assert.True(code == 0, stderr);
        using var doc = JsonDocument.Parse(stdout);
        var root = doc.RootElement;
        Assert.True(root.GetProperty("completed").GetBoolean());
        Assert.True(root.GetProperty("verified").GetBoolean());
        Assert.Equal("grin2", root.GetProperty("network").GetString());
    }

    [Theory]
    [InlineData("--network", "grin", "--mode", "tcp", "--free-ports", "6")]
    [InlineData("--network", "grin", "--mode", "tcp", "--free-ports", "two")]
    [InlineData("--network", "grin", "--mode", "tcp", "--free-ports", "1,2")]
    [InlineData("--network", "grin", "--mode", "tcp", "--nics", "6")]
    [InlineData("--network", "racks", "--mode", "tcp", "--free-ports", "2")]
    [InlineData("--free-ports", "2")]
    public void BadGrinFlagsFailWithOneUsageLine(params string[] flags)
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(["sim", "run", "--torus", "2x2x3", "--input-per-server", "10KB", .. flags]);
        Assert.Equal(2, code);
        Assert.Equal("", stdout.Trim());
        var lines = stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Single(lines);
        Assert.StartsWith("camdoop", lines[0], StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("--figure", "6", "--networks", "racks", "--free-ports", "1")]
    [InlineData("--figure", "6", "--networks", "racks,grin", "--free-ports", "1,9")]
    public void BadSweepGrinFlagsFailWithOneUsageLine(params string[] flags)
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(["sim", "sweep", "--torus", "2x2x3", .. flags]);
        Assert.Equal(2, code);
        Assert.Equal("", stdout.Trim());
        Assert.Single(stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
    }
}
