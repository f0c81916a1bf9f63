using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Tests.Node.Fakes;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Node;

/// <summary>Rate limits in the node's round robin: a limited queue waits for tokens, the others keep the link.</summary>
public class NodeHostRateLimitTests
{
    private const long Millisecond = 1_000_000;
    private const int Payload = 1_000;
    private const int FrameBytes = FrameLayout.HeaderSize + Payload;

    private static readonly byte[] Bytes = new byte[Payload];

    private static (HostFixture F, RecordingService Limited, RecordingService Free) Start(long limit)
    {
        var f = new HostFixture(new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false, QueueCapacity = 1_000, BeaconMisses = 1_000 });
        var limited = new RecordingService(10, "limited");
        var free = new RecordingService(11, "free");
        f.Host.Register(limited);
        f.Host.Register(free);
        f.Host.Start();
        f.Host.SetRateLimit(10, Port.XPlus, limit);
        return (f, limited, free);
    }

    private static void Fill(HostFixture f, byte service, int frames)
    {
        var header = new FrameHeader(service, f.Self, f.NeighbourOn(Port.XPlus));
        for (int i = 0; i < frames; i++)
        {
            Assert.Equal(SendStatus.Queued, f.Host.TrySend(Port.XPlus, ref header, default, Bytes));
        }
    }

    private static int SentBy(HostFixture f, byte service)
    {
        int n = f.Link(Port.XPlus).Sent.Count(frame => HostFixture.ServiceOf(frame) == service);
        return n;
    }

    [Fact]
    public void ALimitedServiceSendsItsBurstThenItsRateWhileTheOtherTakesTheLinkAtOnce()
    {
        long rate = 1_000 * FrameBytes; // 1,000 frames a second: one a millisecond
        var (f, _, _) = Start(rate);
        Assert.Equal(rate, f.Host.RateLimit(10, Port.XPlus));
        Assert.Equal(0, f.Host.RateLimit(11, Port.XPlus));
        Assert.Equal(0, f.Host.RateLimit(10, Port.YPlus));
        Fill(f, 10, 500);
        Fill(f, 11, 500);

        // At once: the burst of the limited one (two jumbo frames' worth), all of the other.
        long burst = TokenBucket.DefaultBurst(rate);
        Assert.Equal(burst / FrameBytes, SentBy(f, 10));
        Assert.Equal(500, SentBy(f, 11));

        // Then one frame a millisecond, woken by timers rather than by polling (no beacon comes back here: BeaconMisses keeps the link up).
        f.Driver.AdvanceTo(100 * Millisecond);
        int sent = SentBy(f, 10);
        Assert.InRange(sent, (burst / FrameBytes) + 99, (burst / FrameBytes) + 101);
        Assert.InRange(f.Driver.ScheduledIds.Count, 1, 200);
        Assert.Equal(500 - sent, f.Host.QueueLength(10, Port.XPlus));
        f.Link(Port.XPlus).ReleaseAll();
    }

    [Fact]
    public void ClearingALimitSendsWhatWaitedAtOnce()
    {
        var (f, _, _) = Start(10_000);
        Fill(f, 10, 50);
        Assert.True(SentBy(f, 10) < 50);
        f.Host.SetRateLimit(10, Port.XPlus, 0);
        Assert.Equal(50, SentBy(f, 10));
        Assert.Equal(0, f.Host.RateLimit(10, Port.XPlus));
        f.Link(Port.XPlus).ReleaseAll();
    }

    [Fact]
    public void ALimitOnOnePortLeavesTheOtherPortsAlone()
    {
        var (f, _, _) = Start(10_000);
        var header = new FrameHeader(10, f.Self, f.NeighbourOn(Port.YPlus));
        for (int i = 0; i < 50; i++)
        {
            Assert.Equal(SendStatus.Queued, f.Host.TrySend(Port.YPlus, ref header, default, Bytes));
        }
        Assert.Equal(50, f.Link(Port.YPlus).Sent.Count(frame => HostFixture.ServiceOf(frame) == 10));
        f.Link(Port.YPlus).ReleaseAll();
    }

    [Fact]
    public void ALimitedServiceIsToldWhenItsQueueHasRoomAgain()
    {
        var f = new HostFixture(new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false, QueueCapacity = 4, BeaconMisses = 1_000 });
        var limited = new RecordingService(10, "limited");
        f.Host.Register(limited);
        f.Host.Start();
        long rate = 100 * FrameBytes;
        f.Host.SetRateLimit(10, Port.XPlus, rate);
        var header = new FrameHeader(10, f.Self, f.NeighbourOn(Port.XPlus));
        var status = SendStatus.Queued;
        while (status == SendStatus.Queued)
        {
            status = f.Host.TrySend(Port.XPlus, ref header, default, Bytes);
        }
        Assert.Equal(SendStatus.QueueFull, status);
        Assert.Empty(limited.SendReady);
        f.Driver.AdvanceTo(20 * Millisecond);
        Assert.Contains(Port.XPlus, limited.SendReady);
        f.Link(Port.XPlus).ReleaseAll();
    }
}
