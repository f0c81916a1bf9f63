using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Tests.Node.Fakes;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Node;

public class NodeHostRelayTests
{
    /// <summary>Relays every frame to one port, or refuses them all (port null); records what it was asked.</summary>
    private sealed class FixedRelay(Port? port) : IFrameRelay
    {
        public List<(Coordinate Destination, Port Arrival)> Asked { get; } = [];

        public bool TryRoute(in FrameHeader header, ReadOnlySpan<byte> frame, Port arrival, out Port next)
        {
            Asked.Add((header.Destination, arrival));
            next = port ?? default;
            return port is not null;
        }
    }

    private static (HostFixture F, RecordingService Service) Relaying(IFrameRelay relay)
    {
        var f = new HostFixture(new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false });
        var service = new RecordingService(10);
        f.Host.Register(service);
        f.Host.Relay = relay;
        f.Host.Start();
        foreach (var link in f.Links)
        {
            link.ReleaseAll();
        }
        return (f, service);
    }

    [Fact]
    public void AFrameForAnotherServerIsRelayedUnseenByItsService()
    {
        var relay = new FixedRelay(Port.YPlus);
        var (f, service) = Relaying(relay);
        var elsewhere = new Coordinate(2, 2, 2);
        var frame = f.Build(10, f.NeighbourOn(Port.XMinus), elsewhere, new byte[300], ttl: 5);

        f.Receive(Port.XMinus, frame);

        Assert.Empty(service.Frames);
        Assert.Equal([(elsewhere, Port.XMinus)], relay.Asked);
        var sent = Assert.Single(f.Link(Port.YPlus).Sent);
        Assert.Same(frame, sent); // handed on as it came, TTL untouched: a relay is one bounded hop
        Assert.Equal(FrameError.None, FrameCodec.TryRead(sent.Span, HostFixture.Cube, out var header));
        Assert.Equal(5, header.Ttl);
        Assert.Equal(1, f.Host.Counters.FramesForwarded);
    }

    [Fact]
    public void FramesForThisServerAndBeaconsAreNotRelayed()
    {
        var relay = new FixedRelay(Port.YPlus);
        var (f, service) = Relaying(relay);
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), f.Self, new byte[10]));
        f.Receive(Port.XMinus, f.Build(WellKnownServices.LinkMonitor, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[10]));

        Assert.Single(service.Frames);
        Assert.Empty(relay.Asked);
        Assert.Empty(f.Link(Port.YPlus).Sent);
        Assert.Equal(0, f.Host.Counters.FramesForwarded);
    }

    [Fact]
    public void AFrameTheRelayRefusesIsDroppedAndCounted()
    {
        var (f, service) = Relaying(new FixedRelay(null));
        long inUse = f.Pool.InUse;
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[10]));

        Assert.Empty(service.Frames);
        Assert.Equal(1, f.Host.Counters.ForwardDropped);
        Assert.Equal(inUse, f.Pool.InUse); // the frame went back to the pool
    }

    [Fact]
    public void TheRelayQueueHoldsItsOwnDepthThenDropsInOrder()
    {
        // Transit holds 100 frames where the service's own queue holds 16: the ring grows past its first 64 slots.
        var f = new HostFixture(new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false, QueueCapacity = 16, TransitQueueCapacity = 100 });
        f.Host.Register(new RecordingService(10));
        f.Host.Relay = new FixedRelay(Port.YPlus);
        f.Host.Start();
        var link = f.Link(Port.YPlus);
        link.ReleaseAll();
        link.Budget = 0;
        for (int i = 0; i < 101; i++)
        {
            f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), BitConverter.GetBytes(i)));
        }
        Assert.Equal(100, f.Host.QueueLength(10, Port.YPlus));
        Assert.Equal(1, f.Host.Counters.ForwardDropped);
        Assert.Equal(16, f.Host.QueueSpace(10, Port.YPlus)); // the service's own queue is untouched

        link.Budget = 100;
        f.Host.OnTransmitReady(Port.YPlus);
        Assert.Equal(Enumerable.Range(0, 100), link.Sent.Select(fr =>
        {
            Assert.Equal(FrameError.None, FrameCodec.TryRead(fr.Span, HostFixture.Cube, out var header));
            return BitConverter.ToInt32(FrameCodec.Payload(fr.Span, header));
        }));
        link.ReleaseAll();
    }

    [Fact]
    public void TheRelayIsSetBeforeTheNodeStarts()
    {
        var f = new HostFixture();
        f.Host.Start();
        Assert.Throws<InvalidOperationException>(() => f.Host.Relay = new FixedRelay(Port.XPlus));
    }
}
