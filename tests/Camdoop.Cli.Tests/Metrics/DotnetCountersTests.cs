using Camdoop.Cli.Tests.Support;
using Camdoop.Hosting;
using Camdoop.Monitoring.Metrics;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Tests.Metrics;

/// <summary>
/// `dotnet-counters collect --counters Camdoop.Node` against this test process, which runs a node (server 1,1,1, so
/// that its series are told apart from other tests' nodes): the tool, installed by the test, reads the node's
/// instruments live, the gauges with the node's values after known traffic and the counters as rates.
/// </summary>
public sealed class DotnetCountersTests : IDisposable
{
    private static readonly Coordinate Server = new(1, 1, 1);
    private readonly OneNode _one = new(Server);

    public void Dispose() => _one.Dispose();

    [Fact]
    public void DotnetCountersReadsTheNodesMeterLive()
    {
        _one.StoreChunk("counted", 0, new byte[2_500]);
        _one.StoreChunk("counted", 1, new byte[1_500]);

        var collected = DotnetCounters.Collect(Environment.ProcessId, NodeMeter.MeterName, seconds: 4)
            .Where(c => c.Tags.GetValueOrDefault("server") == NodeMeter.ServerTag(Server)).ToList();

        Assert.NotEmpty(collected);
        Assert.All(collected, c => Assert.Equal(NodeMeter.MeterName, c.Provider));
        // Every metric the node has a counter for (a server runs no TCP streams here), each under its instrument's name.
        var expected = MetricCatalog.All.Where(m => !m.Name.StartsWith("camdoop_streams_", StringComparison.Ordinal)).Select(m => m.InstrumentName).Order();
        Assert.Equal(expected, collected.Select(c => c.Instrument).Distinct().Order());
        double Latest(string instrument, string? port = null) =>
            collected.Last(c => c.Instrument == instrument && (port is null || c.Tags.GetValueOrDefault("port") == port)).Value;
        Assert.Equal(2, Latest("camdoop_chunk_store_replicas"));
        Assert.Equal(4_000, Latest("camdoop_chunk_store_stored_bytes"));
        Assert.Equal(0, Latest("camdoop_links_up"));
        Assert.Equal(0, Latest("camdoop_link_up", "-Z"));
        // Counters come as rates per second, gauges as values.
        Assert.All(collected.Where(c => c.Instrument == "camdoop_link_sent_bytes"), c => Assert.Equal(("Rate", "By / 1 sec"), (c.Kind, c.Unit)));
        Assert.All(collected.Where(c => c.Instrument == "camdoop_chunk_store_stored_bytes"), c => Assert.Equal(("Metric", "By"), (c.Kind, c.Unit)));
        Assert.Equal(6, collected.Where(c => c.Instrument == "camdoop_link_frames_sent").Select(c => c.Tags["port"]).Distinct().Count());
    }
}
