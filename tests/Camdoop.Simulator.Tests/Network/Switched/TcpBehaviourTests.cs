using Camdoop.Experiments.Traffic;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Network.Switched;

/// <summary>The node's TCP across one simulated switch against behaviour TCP is known for.</summary>
public class TcpBehaviourTests
{
    private static readonly Torus Servers = new(3, 3, 3);

    /// <summary>Payload bits per second a saturated 1 Gbps link carries in full segments: each frame adds headers and framing.</summary>
    private static double LineRateGoodput(int mss) =>
        1e9 * mss / (mss + TcpWire.HeaderSize + FrameLayout.HeaderSize + 24);

    private static TcpTraffic Traffic(IReadOnlyList<TcpFlow> flows, int bufferBytes = 256 * 1024, TcpOptions? tcp = null, int ecnThreshold = 0) =>
        new(new TcpTrafficOptions
        {
            Torus = Servers,
            Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch, PortBufferBytes = bufferBytes, EcnThresholdBytes = ecnThreshold },
            Tcp = tcp ?? new TcpOptions(),
            Flows = flows,
        });

    [Fact]
    public void OneFlowReachesLineRate()
    {
        using var traffic = Traffic([new TcpFlow(0, 13, 50_000_000)]);
        var result = traffic.Run();
        Assert.True(result.AllDone);
        Assert.Equal(0, result.CorruptBytes);
        Assert.Equal(50_000_000, result.PayloadBytes);
        Assert.Equal(0, result.SegmentsResent);
        double goodput = result.PayloadBytes * 8 / SimTime.ToSeconds(result.Duration);
        // Slow start and the path's delay cost a few hundred microseconds of 400 ms.
        Assert.InRange(goodput, 0.99 * LineRateGoodput(TcpWire.MaxSegmentSize), LineRateGoodput(TcpWire.MaxSegmentSize));
    }

    [Fact]
    public void APacedFlowSendsAtItsPace()
    {
        // 100 Mbit/s of segment and TCP header: 1 MB in 112 full segments and one short one.
        const long pace = 100_000_000;
        const int bytes = 1_000_000;
        using var traffic = Traffic([new TcpFlow(0, 13, bytes)], tcp: new TcpOptions { PacingBitsPerSecond = pace });
        var result = traffic.Run();
        Assert.True(result.AllDone);
        Assert.Equal(0, result.CorruptBytes);
        int segments = (bytes + TcpWire.MaxSegmentSize - 1) / TcpWire.MaxSegmentSize;
        double paced = (bytes + ((double)segments * TcpWire.HeaderSize)) * 8 / pace * SimTime.Second;
        // The last segment leaves one pacing gap after the one before and then crosses two links.
        Assert.InRange(result.Duration, (long)(paced * 0.97), (long)(paced * 1.03));
    }

    [Fact]
    public void IncastWithSmallBuffersLosesThroughputAndRecoversByTimeouts()
    {
        // 26 servers send 256 KB each to one: with 64 KB of buffer (7 jumbo frames) whole windows are lost and only
        // the 200 ms timeout brings them back; with 8 MB the same transfer runs at the receiver's line rate.
        var flows = TcpFlow.Incast(Servers.Count, 0, 256 * 1024);
        long bytes = flows.Sum(f => f.Bytes);
        using var small = Traffic(flows, bufferBytes: 64 * 1024);
        using var large = Traffic(flows, bufferBytes: 8 * 1024 * 1024);
        var lossy = small.Run();
        var clean = large.Run();
        Assert.True(lossy.AllDone && clean.AllDone);
        Assert.Equal(0, lossy.CorruptBytes);
        Assert.Equal(bytes, lossy.PayloadBytes);
        Assert.True(lossy.SwitchDrops > 0);
        Assert.True(lossy.Timeouts > 0, "no flow timed out");
        Assert.True(lossy.Duration > 200 * SimTime.Millisecond, "no timeout delayed the transfer");
        Assert.Equal(0, clean.SwitchDrops);
        Assert.Equal(0, clean.Timeouts);
        double ideal = bytes * 8 / LineRateGoodput(TcpWire.MaxSegmentSize) * SimTime.Second;
        Assert.InRange(clean.Duration, (long)ideal, (long)(ideal * 1.05));
        Assert.True(lossy.Duration > 4 * clean.Duration, $"incast {lossy.Duration} ns against {clean.Duration} ns");
    }

    [Fact]
    public void DctcpKeepsTheIncastQueueShortAndLosesNothing()
    {
        var flows = TcpFlow.Incast(Servers.Count, 0, 1024 * 1024);
        using var traffic = Traffic(flows, bufferBytes: 512 * 1024, tcp: new TcpOptions { Dctcp = true, InitialWindowSegments = 2 }, ecnThreshold: 64 * 1024);
        var result = traffic.Run();
        Assert.True(result.AllDone);
        Assert.Equal(0, result.CorruptBytes);
        Assert.True(result.EcnMarks > 0);
        Assert.Equal(0, result.Timeouts);
        double ideal = flows.Sum(f => f.Bytes) * 8 / LineRateGoodput(TcpWire.MaxSegmentSize) * SimTime.Second;
        Assert.InRange(result.Duration, (long)ideal, (long)(ideal * 1.1));
    }
}
