using Camdoop.Cli.Commands;
using Camdoop.Hosting;

namespace Camdoop.Cli.Tests.Node;

public class NodeWarmUpTests
{
    [Fact]
    public void TheWarmUpJobsFinishAndLeaveNothingOnDisk()
    {
        string root = Path.Combine(Path.GetTempPath(), $"camdoop-warm-up-test-{Environment.ProcessId}");
        // Each job that fails or does not finish throws; the message reports all three.
        string report = NodeWarmUp.Run(root);
        Assert.StartsWith("warm-up: 3 jobs", report, StringComparison.Ordinal);
        Assert.False(Directory.Exists(root), "the warm-up left its simulated servers' files behind");
    }

    [Fact]
    public void NodesWarmUpUnlessTheirConfigSaysNot()
    {
        var config = new NodeConfig { Coordinate = "0,0,0", Torus = "3x3x3", DataDirectory = "/tmp/x" };
        Assert.True(config.Validate().WarmUp);
        Assert.False((config with { WarmUp = false }).Validate().WarmUp);
        string json = System.Text.Json.JsonSerializer.Serialize(config with { WarmUp = false }, NodeConfig.JsonOptions);
        Assert.False(System.Text.Json.JsonSerializer.Deserialize<NodeConfig>(json, NodeConfig.JsonOptions)!.WarmUp);
    }
}
