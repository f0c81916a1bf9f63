using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Tests.Node.Fakes;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Node;

public class NodeHostSendTests
{
    private static SendStatus Send(NodeHost host, byte service, Port port, int sequence, int payloadLength = 16)
    {
        var header = new FrameHeader(service, host.Self, host.Torus.Neighbour(host.Self, port));
        var payload = new byte[payloadLength];
        BinaryPrimitives.WriteInt32BigEndian(payload, sequence);
        return host.TrySend(port, ref header, default, payload);
    }

    private static (byte Service, int Sequence, int Length) Describe(Frame frame)
    {
        Assert.Equal(FrameError.None, FrameCodec.TryRead(frame.Span, HostFixture.Cube, out var header));
        return (header.ServiceId, BinaryPrimitives.ReadInt32BigEndian(FrameCodec.Payload(frame.Span, header)), frame.Length);
    }

    [Fact]
    public void QueueIsBoundedAndTheServiceIsToldOnceWhenThereIsRoom()
    {
        var f = new HostFixture(new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false, QueueCapacity = 4 });
        var service = new RecordingService(10);
        f.Host.Register(service);
        f.Host.Start();
        var link = f.Link(Port.XPlus);
        link.ReleaseAll();
        link.Budget = 0;
        long beaconsSent = f.Host.Counters.FramesSent[(int)Port.XPlus];
        long beaconBytes = f.Host.Counters.BytesSent[(int)Port.XPlus];

        for (int i = 0; i < 4; i++)
        {
            Assert.Equal(SendStatus.Queued, Send(f.Host, 10, Port.XPlus, i));
        }
        Assert.Equal(SendStatus.QueueFull, Send(f.Host, 10, Port.XPlus, 4));
        Assert.Equal(SendStatus.QueueFull, Send(f.Host, 10, Port.XPlus, 5));
        Assert.Equal(2, f.Host.Counters.QueueFull);
        Assert.Equal(0, f.Host.QueueSpace(10, Port.XPlus));
        Assert.Equal(4, f.Host.QueueLength(10, Port.XPlus));
        Assert.Equal(4, f.Host.QueueSpace(10, Port.YPlus)); // queues are per port
        Assert.Empty(link.Sent);
        Assert.Empty(service.SendReady);

        link.Budget = 1;
        f.Host.OnTransmitReady(Port.XPlus);
        Assert.Equal([Port.XPlus], service.SendReady);
        Assert.Equal(1, f.Host.QueueSpace(10, Port.XPlus));

        link.Budget = 3;
        f.Host.OnTransmitReady(Port.XPlus);
        Assert.Single(service.SendReady); // no new refusal, no new notice
        Assert.Equal([0, 1, 2, 3], link.Sent.Select(fr => Describe(fr).Sequence));
        Assert.Equal(beaconsSent + 4, f.Host.Counters.FramesSent[(int)Port.XPlus]);
        Assert.Equal(beaconBytes + (4 * FrameLayout.MinFrameSize), f.Host.Counters.BytesSent[(int)Port.XPlus]);
        link.ReleaseAll();
    }

    [Fact]
    public void AFrameFilledInPlaceGoesOutWithItsPayloadAndStaysTheCallersWhenRefused()
    {
        var f = new HostFixture(new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false, QueueCapacity = 1 });
        f.Host.Register(new RecordingService(10));
        f.Host.Start();
        var link = f.Link(Port.YMinus);
        link.ReleaseAll();
        link.Budget = 0;
        var key = Enumerable.Range(1, FrameLayout.KeySize).Select(i => (byte)i).ToArray();
        var payload = Enumerable.Range(0, 3000).Select(i => (byte)(i * 7)).ToArray();

        Frame Fill()
        {
            var frame = f.Host.Frames.Rent();
            payload.CopyTo(frame.Buffer.AsSpan(FrameLayout.PayloadOffset(keyRouted: true)));
            return frame;
        }
        var destination = f.Host.Torus.Neighbour(f.Host.Self, Port.YMinus);
        var header = new FrameHeader(10, f.Host.Self, destination, FrameFlags.KeyRouted, 9);
        var first = Fill();
        Assert.Equal(SendStatus.Queued, f.Host.TrySend(Port.YMinus, ref header, key, first, payload.Length));
        long inUse = f.Host.Frames.InUse;

        // The queue is full: the frame is refused and still the caller's to reuse or release.
        var second = Fill();
        header = new FrameHeader(10, f.Host.Self, destination, FrameFlags.KeyRouted, 9);
        Assert.Equal(SendStatus.QueueFull, f.Host.TrySend(Port.YMinus, ref header, key, second, payload.Length));
        Assert.Equal(inUse + 1, f.Host.Frames.InUse);
        second.Release();
        Assert.Equal(inUse, f.Host.Frames.InUse);

        link.Budget = 1;
        f.Host.OnTransmitReady(Port.YMinus);
        var sent = Assert.Single(link.Sent);
        Assert.Same(first, sent); // no copy into another frame
        Assert.Equal(FrameError.None, FrameCodec.TryRead(sent.Span, HostFixture.Cube, out var read));
        Assert.Equal(payload.Length, read.PayloadLength);
        Assert.Equal(destination, read.Destination);
        Assert.True(read.IsKeyRouted);
        Assert.Equal(payload, FrameCodec.Payload(sent.Span, read).ToArray());
        Assert.Equal(key, FrameCodec.Key(sent.Span, read).ToArray());
        link.ReleaseAll();
    }

    [Fact]
    public void ARequestedSendReadyComesWithTheNextTransmitEvenWithoutARefusal()
    {
        var f = new HostFixture(new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false, QueueCapacity = 4 });
        var service = new RecordingService(10);
        f.Host.Register(service);
        f.Host.Start();
        var link = f.Link(Port.XPlus);
        link.ReleaseAll();
        link.Budget = 0;
        Assert.Equal(SendStatus.Queued, Send(f.Host, 10, Port.XPlus, 0));
        Assert.Equal(SendStatus.Queued, Send(f.Host, 10, Port.XPlus, 1));
        f.Host.RequestSendReady(10, Port.XPlus);
        Assert.Empty(service.SendReady); // nothing moved yet
        link.Budget = 1;
        f.Host.OnTransmitReady(Port.XPlus);
        Assert.Equal([Port.XPlus], service.SendReady);
        link.Budget = 1;
        f.Host.OnTransmitReady(Port.XPlus);
        Assert.Single(service.SendReady); // one request, one notice
    }

    [Fact]
    public void DeficitRoundRobinAlternatesServicesWithEqualJumboFrames()
    {
        var f = new HostFixture();
        f.Host.Register(new RecordingService(10, "a"));
        f.Host.Register(new RecordingService(11, "b"));
        f.Host.Start();
        var link = f.Link(Port.ZMinus);
        link.ReleaseAll();
        link.Budget = 0;
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(SendStatus.Queued, Send(f.Host, 10, Port.ZMinus, i, FrameLayout.MaxPayload));
        }
        for (int i = 0; i < 5; i++)
        {
            Assert.Equal(SendStatus.Queued, Send(f.Host, 11, Port.ZMinus, 100 + i, FrameLayout.MaxPayload));
        }

        // A transmit ring of one frame: the round-robin position must survive between pumps.
        for (int i = 0; i < 4; i++)
        {
            link.Budget = 1;
            f.Host.OnTransmitReady(Port.ZMinus);
        }
        link.Budget = int.MaxValue;
        f.Host.OnTransmitReady(Port.ZMinus);

        var order = link.Sent.Select(fr => Describe(fr)).ToList();
        Assert.Equal([10, 11, 10, 11, 10, 11, 10, 11, 10, 11], order.Select(o => (int)o.Service));
        Assert.Equal([0, 100, 1, 101, 2, 102, 3, 103, 4, 104], order.Select(o => o.Sequence));
        link.ReleaseAll();
    }

    [Fact]
    public void DeficitRoundRobinSharesBytesNotFrames()
    {
        var f = new HostFixture();
        f.Host.Register(new RecordingService(10, "jumbo"));
        f.Host.Register(new RecordingService(11, "small"));
        f.Host.Start();
        var link = f.Link(Port.YPlus);
        link.ReleaseAll();
        link.Budget = 0;
        for (int i = 0; i < 6; i++)
        {
            Assert.Equal(SendStatus.Queued, Send(f.Host, 10, Port.YPlus, i, FrameLayout.MaxPayload));
        }
        for (int i = 0; i < 64; i++)
        {
            Assert.Equal(SendStatus.Queued, Send(f.Host, 11, Port.YPlus, i, 1000 - FrameLayout.HeaderSize));
        }
        link.Budget = int.MaxValue;
        f.Host.OnTransmitReady(Port.YPlus);

        var order = link.Sent.Select(fr => Describe(fr)).ToList();
        Assert.Equal(70, order.Count);
        // Each visit earns one jumbo frame of credit: one 9,014-byte frame, then nine 1,000-byte frames.
        for (int round = 0; round < 6; round++)
        {
            Assert.Equal((10, 9014), (order[round * 10].Service, order[round * 10].Length));
            for (int k = 1; k < 10; k++)
            {
                Assert.Equal((11, 1000), (order[(round * 10) + k].Service, order[(round * 10) + k].Length));
            }
        }
        long jumboBytes = order.Take(60).Where(o => o.Service == 10).Sum(o => o.Length);
        long smallBytes = order.Take(60).Where(o => o.Service == 11).Sum(o => o.Length);
        Assert.InRange(jumboBytes - smallBytes, 0, FrameLayout.MaxFrameSize);
        link.ReleaseAll();
    }

    [Fact]
    public void LosingCarrierFlushesQueuesAndRefusesSends()
    {
        var f = new HostFixture();
        var service = new RecordingService(10);
        f.Host.Register(service);
        f.Host.Start();
        var link = f.Link(Port.XMinus);
        link.ReleaseAll();
        link.Budget = 0;
        Send(f.Host, 10, Port.XMinus, 1);
        Send(f.Host, 10, Port.XMinus, 2);
        long queued = f.Pool.InUse;

        link.CarrierUp = false;
        f.Host.OnCarrierChanged(Port.XMinus, false);

        Assert.False(f.Host.IsLinkUp(Port.XMinus));
        Assert.True(f.Host.IsLinkUp(Port.XPlus));
        Assert.Equal([(Port.XMinus, false)], service.LinkChanges);
        Assert.Equal(2, f.Host.Counters.QueueFlushed);
        Assert.Equal(queued - 2, f.Pool.InUse);
        Assert.Equal(SendStatus.LinkDown, Send(f.Host, 10, Port.XMinus, 3));
        Assert.Equal(1, f.Host.Counters.SentOnDownLink);
    }

    [Fact]
    public void OversizedPayloadThrowsWithoutLeakingAFrame()
    {
        var f = new HostFixture();
        f.Host.Register(new RecordingService(10));
        f.Host.Start();
        long inUse = f.Pool.InUse;
        var header = new FrameHeader(10, f.Self, f.NeighbourOn(Port.XPlus));
        Assert.Throws<ArgumentOutOfRangeException>(() => f.Host.TrySend(Port.XPlus, ref header, default, new byte[FrameLayout.MaxPayload + 1]));
        Assert.Throws<ArgumentOutOfRangeException>(() => f.Host.DeliverLocal(ref header, default, new byte[FrameLayout.MaxPayload + 1]));
        Assert.Equal(inUse, f.Pool.InUse);
    }

    [Fact]
    public void SendingForAnUnregisteredServiceIsAProgrammingError()
    {
        var f = new HostFixture();
        f.Host.Start();
        var header = new FrameHeader(99, f.Self, f.NeighbourOn(Port.XPlus));
        Assert.Throws<InvalidOperationException>(() => f.Host.TrySend(Port.XPlus, ref header, default, default));
        Assert.Equal(0, f.Host.QueueSpace(99, Port.XPlus));
    }
}
