using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Tests.Node.Fakes;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Node;

public class LinkMonitorTests
{
    private const long Ms = NodeOptions.Millisecond;

    private static NodeOptions Options(bool assumeUp) => new()
    {
        AssumeLinksUpAtStart = assumeUp,
        IsolateServiceFaults = false,
        BeaconInterval = 10 * Ms,
        BeaconMisses = 3,
    };

    /// <summary>A real beacon, as the server at <paramref name="from"/> sends it on <paramref name="port"/>.</summary>
    private static Frame BeaconFrom(Coordinate from, Port port, FramePool pool)
    {
        var peer = new HostFixture(Options(assumeUp: true), from);
        peer.Host.Start();
        var beacon = Assert.Single(peer.TakeSent(port));
        var copy = pool.Rent();
        beacon.Span.CopyTo(copy.Buffer);
        copy.Length = beacon.Length;
        beacon.Release();
        return copy;
    }

    [Fact]
    public void BeaconsGoOutOnEveryPortEachInterval()
    {
        var f = new HostFixture(Options(assumeUp: true));
        f.Host.Start();
        f.Driver.AdvanceTo(25 * Ms);
        foreach (var port in Ports.All)
        {
            var beacons = f.TakeSent(port);
            Assert.Equal(3, beacons.Count); // t = 0, 10, 20 ms
            foreach (var b in beacons)
            {
                Assert.Equal(FrameError.None, FrameCodec.TryRead(b.Span, HostFixture.Cube, out var header));
                Assert.Equal(WellKnownServices.LinkMonitor, header.ServiceId);
                Assert.Equal(f.NeighbourOn(port), header.Destination);
                Assert.Equal(1, header.Ttl);
                b.Release();
            }
        }
        Assert.Equal(18, f.Host.Monitor.BeaconsSent);
    }

    [Fact]
    public void SilentLinkGoesDownAfterTheMissesWhileAHeardLinkStaysUp()
    {
        var f = new HostFixture(Options(assumeUp: true));
        var service = new RecordingService(10);
        f.Host.Register(service);
        f.Host.Start();
        var down = new Dictionary<Port, long>();
        for (long t = 0; t <= 60 * Ms; t += Ms)
        {
            f.Driver.AdvanceTo(t);
            if (t % (10 * Ms) == 5 * Ms)
            {
                // Only the neighbour on +Y keeps talking.
                f.Receive(Port.YPlus, BeaconFrom(f.NeighbourOn(Port.YPlus), Port.YMinus, f.Pool));
            }
            foreach (var (port, up) in service.LinkChanges)
            {
                if (!up)
                {
                    down.TryAdd(port, t);
                }
            }
        }
        Assert.True(f.Host.IsLinkUp(Port.YPlus));
        Assert.DoesNotContain(Port.YPlus, down.Keys);
        Assert.Equal(5, down.Count);
        foreach (var t in down.Values)
        {
            // Last heard at 0: declared down at the first beacon tick more than 3 x 10 ms later.
            Assert.Equal(40 * Ms, t);
        }
        Assert.Equal(0, f.Host.Monitor.WiringErrors);
    }

    [Fact]
    public void LinkComesBackUpWhenBeaconsResume()
    {
        var f = new HostFixture(Options(assumeUp: true));
        var service = new RecordingService(10);
        f.Host.Register(service);
        f.Host.Start();
        f.Driver.AdvanceTo(45 * Ms);
        Assert.False(f.Host.IsLinkUp(Port.ZMinus));
        var header = new FrameHeader(10, f.Self, f.NeighbourOn(Port.ZMinus));
        Assert.Equal(SendStatus.LinkDown, f.Host.TrySend(Port.ZMinus, ref header, default, [1]));

        f.Receive(Port.ZMinus, BeaconFrom(f.NeighbourOn(Port.ZMinus), Port.ZPlus, f.Pool));
        Assert.True(f.Host.IsLinkUp(Port.ZMinus));
        Assert.Equal((Port.ZMinus, true), service.LinkChanges[^1]);
        Assert.Equal(SendStatus.Queued, f.Host.TrySend(Port.ZMinus, ref header, default, [1]));
        Assert.True(f.Host.Monitor.HasHeard(Port.ZMinus));
        Assert.False(f.Host.Monitor.HasHeard(Port.ZPlus));
    }

    [Fact]
    public void AnyValidFrameFromTheNeighbourCountsAsHearingIt()
    {
        var f = new HostFixture(Options(assumeUp: true));
        f.Host.Register(new RecordingService(10));
        f.Host.Start();
        for (long t = 5 * Ms; t <= 100 * Ms; t += 10 * Ms)
        {
            f.Driver.AdvanceTo(t);
            f.Receive(Port.XPlus, f.Build(10, new Coordinate(0, 0, 0), f.Self, [1]));
        }
        Assert.True(f.Host.IsLinkUp(Port.XPlus));
        Assert.False(f.Host.IsLinkUp(Port.XMinus));
    }

    [Fact]
    public void WithoutTheStartAssumptionLinksComeUpOnTheFirstBeaconOnly()
    {
        var f = new HostFixture(Options(assumeUp: false));
        var service = new RecordingService(10);
        f.Host.Register(service);
        f.Host.Start();
        foreach (var port in Ports.All)
        {
            Assert.False(f.Host.IsLinkUp(port));
            Assert.Single(f.TakeSent(port)).Release(); // beacons still go out on links with carrier
        }
        var header = new FrameHeader(10, f.Self, f.NeighbourOn(Port.XPlus));
        Assert.Equal(SendStatus.LinkDown, f.Host.TrySend(Port.XPlus, ref header, default, [1]));

        f.Receive(Port.XPlus, BeaconFrom(f.NeighbourOn(Port.XPlus), Port.XMinus, f.Pool));
        Assert.True(f.Host.IsLinkUp(Port.XPlus));
        Assert.Equal([(Port.XPlus, true)], service.LinkChanges);
    }

    [Fact]
    public void BeaconFromTheWrongServerOrPortIsCountedAndDoesNotBringTheLinkUp()
    {
        var f = new HostFixture(Options(assumeUp: false));
        f.Host.Register(new RecordingService(10));
        f.Host.Start();

        // A server two hops away claims to be on +X.
        f.Receive(Port.XPlus, BeaconFrom(new Coordinate(0, 0, 0), Port.XMinus, f.Pool));
        // The right neighbour, but the cable is in its +Y port instead of its -X port.
        f.Receive(Port.XPlus, BeaconFrom(f.NeighbourOn(Port.XPlus), Port.YPlus, f.Pool));

        Assert.Equal(2, f.Host.Monitor.WiringErrors);
        Assert.False(f.Host.IsLinkUp(Port.XPlus));
        Assert.False(f.Host.Monitor.HasHeard(Port.XPlus));
        Assert.Equal(2, f.Driver.Logs.Count(l => l.Level == LogLevel.Warning));
        Assert.Equal(0, f.Host.Counters.TotalRejected);
    }

    [Fact]
    public void AFrameToTheMonitorThatIsNoBeaconIsCountedAndDoesNotBringTheLinkUp()
    {
        var f = new HostFixture(Options(assumeUp: false));
        f.Host.Register(new RecordingService(10));
        f.Host.Start();

        var wrongMagic = BeaconFrom(f.NeighbourOn(Port.XPlus), Port.XMinus, f.Pool);
        wrongMagic.Buffer[FrameLayout.HeaderSize] ^= 0xFF;
        f.Receive(Port.XPlus, wrongMagic);
        var shortPayload = f.Pool.Rent();
        var header = new FrameHeader(WellKnownServices.LinkMonitor, f.NeighbourOn(Port.XPlus), f.Self, ttl: 1);
        shortPayload.Length = FrameCodec.Write(shortPayload.Buffer, ref header, default, [0xCA, 0x3D, 0x00]);
        f.Receive(Port.XPlus, shortPayload);

        Assert.Equal(2, f.Host.Monitor.MalformedBeacons);
        Assert.Equal(0, f.Host.Monitor.WiringErrors);
        Assert.False(f.Host.IsLinkUp(Port.XPlus));
        Assert.False(f.Host.Monitor.HasHeard(Port.XPlus));
        Assert.Equal(0, f.Host.Counters.TotalRejected); // valid frames: the monitor, not the runtime, drops them
    }

    [Fact]
    public void CarrierLossIsImmediateAndCarrierReturnSendsABeaconAtOnce()
    {
        var f = new HostFixture(Options(assumeUp: true));
        var service = new RecordingService(10);
        f.Host.Register(service);
        f.Host.Start();
        f.Driver.AdvanceTo(3 * Ms);
        var link = f.Link(Port.YMinus);
        link.ReleaseAll();

        link.CarrierUp = false;
        f.Host.OnCarrierChanged(Port.YMinus, false);
        Assert.False(f.Host.IsLinkUp(Port.YMinus));
        Assert.Equal([(Port.YMinus, false)], service.LinkChanges);
        f.Driver.AdvanceTo(15 * Ms);
        Assert.Empty(link.Sent); // no beacons without carrier

        link.CarrierUp = true;
        f.Host.OnCarrierChanged(Port.YMinus, true);
        Assert.Single(link.Sent); // at once, not at the next tick
        Assert.False(f.Host.IsLinkUp(Port.YMinus)); // up only once the neighbour is heard
        f.Receive(Port.YMinus, BeaconFrom(f.NeighbourOn(Port.YMinus), Port.YPlus, f.Pool));
        Assert.True(f.Host.IsLinkUp(Port.YMinus));
    }
}
