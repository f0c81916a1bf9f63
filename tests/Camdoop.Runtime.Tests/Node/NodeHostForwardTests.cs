using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Tests.Node.Fakes;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Node;

public class NodeHostForwardTests
{
    private sealed class ForwardingRouter(NodeHost host, Port next) : IKeyRouter
    {
        public List<SendStatus> Results { get; } = [];

        public int Routed { get; private set; }

        public void OnKeyRoutedFrame(in InboundFrame frame)
        {
            Routed++;
            if (frame.Header.Destination == host.Self)
            {
                host.Deliver(frame);
            }
            else
            {
                Results.Add(host.TryForward(frame, next));
            }
        }
    }

    private static (HostFixture F, RecordingService Service, List<SendStatus> Results) Forwarder(Port next, int queueCapacity = 64)
    {
        var f = new HostFixture(new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false, QueueCapacity = queueCapacity });
        var service = new RecordingService(10);
        var results = new List<SendStatus>();
        service.OnFrameHook = (in InboundFrame frame) => results.Add(f.Host.TryForward(frame, next));
        f.Host.Register(service);
        f.Host.Start();
        foreach (var link in f.Links)
        {
            link.ReleaseAll();
        }
        return (f, service, results);
    }

    /// <summary>The payload length of every frame the link sent, in order (each frame checked whole).</summary>
    private static int[] PayloadLengths(FakeLink link) => link.Sent.Select(frame =>
    {
        Assert.Equal(FrameError.None, FrameCodec.TryRead(frame.Span, HostFixture.Cube, out var h));
        return (int)h.PayloadLength;
    }).ToArray();

    [Fact]
    public void ForwardingDecrementsTheTtlAndHandsOnTheSameBuffer()
    {
        var (f, _, results) = Forwarder(Port.XPlus);
        var frame = f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[300], ttl: 5);

        f.Receive(Port.XMinus, frame);

        Assert.Equal([SendStatus.Queued], results);
        var sent = Assert.Single(f.Link(Port.XPlus).Sent);
        Assert.Same(frame, sent); // zero copy
        Assert.Equal(FrameError.None, FrameCodec.TryRead(sent.Span, HostFixture.Cube, out var header));
        Assert.Equal(4, header.Ttl);
        Assert.Equal(300, header.PayloadLength);
        Assert.Equal(1, f.Host.Counters.FramesForwarded);
        Assert.Equal(1, f.Pool.InUse);
        f.Link(Port.XPlus).ReleaseAll();
        Assert.Equal(0, f.Pool.InUse);
    }

    [Fact]
    public void ForwardingAFrameWithTtlOneDropsAndCountsIt()
    {
        var (f, _, results) = Forwarder(Port.XPlus);
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[8], ttl: 1));
        Assert.Equal([SendStatus.TtlExpired], results);
        Assert.Empty(f.Link(Port.XPlus).Sent);
        Assert.Equal(1, f.Host.Counters.RejectedFor(FrameError.TtlExpired));
        Assert.Equal(1, f.Host.Counters.ForwardDropped);
        Assert.Equal(0, f.Pool.InUse);
    }

    [Fact]
    public void TransitFramesAreDroppedNotPushedBackWhenTheQueueIsFull()
    {
        var (f, service, results) = Forwarder(Port.YPlus, queueCapacity: 2);
        f.Link(Port.YPlus).Budget = 0;
        for (int i = 0; i < 3; i++)
        {
            f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[8]));
        }
        Assert.Equal([SendStatus.Queued, SendStatus.Queued, SendStatus.QueueFull], results);
        Assert.Equal(1, f.Host.Counters.ForwardDropped);
        Assert.Equal(2, f.Pool.InUse);
        Assert.Empty(service.SendReady);
    }

    [Fact]
    public void UrgentTransitFramesHaveRoomWhenTheTransitQueueIsFullAndGoFirst()
    {
        var (f, _, results) = Forwarder(Port.YPlus, queueCapacity: 2);
        var link = f.Link(Port.YPlus);
        link.Budget = 0;
        // Data in transit fills its queue: a third data frame is dropped, an urgent one (an ack, a restart request) is not.
        for (int i = 0; i < 3; i++)
        {
            f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[100]));
        }
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[7], FrameFlags.Urgent));
        Assert.Equal([SendStatus.Queued, SendStatus.Queued, SendStatus.QueueFull, SendStatus.Queued], results);
        Assert.Equal(1, f.Host.Counters.ForwardDropped);

        link.Budget = 3;
        f.Host.OnTransmitReady(Port.YPlus);
        Assert.Equal([7, 100, 100], PayloadLengths(link));
        link.ReleaseAll();
        Assert.Equal(0, f.Pool.InUse);
    }

    [Fact]
    public void UrgentTransitFramesAreDroppedOnlyWhenTheirOwnRingIsFull()
    {
        var (f, _, results) = Forwarder(Port.YPlus, queueCapacity: 2);
        f.Link(Port.YPlus).Budget = 0;
        for (int i = 0; i <= NodeOptions.UrgentTransitCapacity; i++)
        {
            f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[7], FrameFlags.Urgent));
        }
        Assert.Equal(NodeOptions.UrgentTransitCapacity, results.Count(r => r == SendStatus.Queued));
        Assert.Equal(SendStatus.QueueFull, results[^1]);
        Assert.Equal(1, f.Host.Counters.ForwardDropped);
    }

    [Fact]
    public void AnUrgentFrameAServiceOriginatesQueuesWithItsOwnFrames()
    {
        var (f, _, _) = Forwarder(Port.YPlus, queueCapacity: 1);
        f.Link(Port.YPlus).Budget = 0;
        var own = new FrameHeader(10, f.Self, f.NeighbourOn(Port.YPlus));
        Assert.Equal(SendStatus.Queued, f.Host.TrySend(Port.YPlus, ref own, default, new byte[11]));
        // The service orders what it sends itself: its urgent frame meets the same back-pressure as the rest.
        var urgent = new FrameHeader(10, f.Self, f.NeighbourOn(Port.YPlus), FrameFlags.Urgent);
        Assert.Equal(SendStatus.QueueFull, f.Host.TrySend(Port.YPlus, ref urgent, default, new byte[5]));
    }

    [Fact]
    public void ForwardedFramesGoBeforeTheServicesOwnAndAreNotBlockedByAFullLocalQueue()
    {
        var (f, _, results) = Forwarder(Port.YPlus, queueCapacity: 2);
        var link = f.Link(Port.YPlus);
        link.Budget = 0;
        var own = new FrameHeader(10, f.Self, f.NeighbourOn(Port.YPlus));
        Assert.Equal(SendStatus.Queued, f.Host.TrySend(Port.YPlus, ref own, default, new byte[11]));
        Assert.Equal(SendStatus.Queued, f.Host.TrySend(Port.YPlus, ref own, default, new byte[11]));
        Assert.Equal(SendStatus.QueueFull, f.Host.TrySend(Port.YPlus, ref own, default, new byte[11]));

        // The service's own queue is full, yet transit frames still get their own room.
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[22]));
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[22]));
        Assert.Equal([SendStatus.Queued, SendStatus.Queued], results);

        link.Budget = 4;
        f.Host.OnTransmitReady(Port.YPlus);
        Assert.Equal([22, 22, 11, 11], PayloadLengths(link));
        link.ReleaseAll();
        Assert.Equal(0, f.Pool.InUse);
    }

    [Fact]
    public void ForwardingOnADownLinkDrops()
    {
        var (f, _, results) = Forwarder(Port.ZPlus);
        f.Link(Port.ZPlus).CarrierUp = false;
        f.Host.OnCarrierChanged(Port.ZPlus, false);
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[8]));
        Assert.Equal([SendStatus.LinkDown], results);
        Assert.Equal(0, f.Pool.InUse);
    }

    [Fact]
    public void ForwardingTheSameFrameTwiceIsRefused()
    {
        var f = new HostFixture();
        var service = new RecordingService(10);
        service.OnFrameHook = (in InboundFrame frame) =>
        {
            Assert.Equal(SendStatus.Queued, f.Host.TryForward(frame, Port.XPlus));
            try
            {
                f.Host.TryForward(frame, Port.YPlus);
                Assert.Fail("a second forward of the same buffer was accepted");
            }
            catch (InvalidOperationException)
            {
            }
        };
        f.Host.Register(service);
        f.Host.Start();
        f.Link(Port.YPlus).ReleaseAll();
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(2, 2, 2), new byte[8]));
        Assert.Single(service.Frames);
        Assert.Empty(f.Link(Port.YPlus).Sent);
    }

    [Fact]
    public void TheKeyRouterSeesRoutedFramesFirstAndPlainFramesBypassIt()
    {
        var f = new HostFixture();
        var service = new RecordingService(10);
        f.Host.Register(service);
        var router = new ForwardingRouter(f.Host, Port.ZMinus);
        f.Host.SetKeyRouter(router);
        f.Host.Start();
        f.Link(Port.ZMinus).ReleaseAll();
        var key = new byte[FrameLayout.KeySize];
        key[0] = 0xAB;

        // Routed through: forwarded by the router, the service never sees it.
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), new Coordinate(1, 1, 0), new byte[8], FrameFlags.KeyRouted, key: key));
        Assert.Equal(1, router.Routed);
        Assert.Empty(service.Frames);
        Assert.Single(f.Link(Port.ZMinus).Sent);

        // Routed to here: the router delivers it to the service with its key.
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), f.Self, new byte[8], FrameFlags.CoordinateRouted));
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), f.Self, new byte[8], FrameFlags.KeyRouted, key: key));
        Assert.Equal(3, router.Routed);
        Assert.Equal(2, service.Frames.Count);
        Assert.Equal(key, service.Frames[1].Key);

        // Plain: straight to the service.
        f.Receive(Port.XMinus, f.Build(10, f.NeighbourOn(Port.XMinus), f.Self, new byte[8]));
        Assert.Equal(3, router.Routed);
        Assert.Equal(3, service.Frames.Count);
        foreach (var link in f.Links)
        {
            link.ReleaseAll();
        }
        Assert.Equal(0, f.Pool.InUse);
    }
}
