using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Node.Fakes;

/// <summary>One <see cref="NodeHost"/> at (1,1,1) of a 3x3x3 cube with a fake link on every port and a manual clock.</summary>
internal sealed class HostFixture
{
    public static readonly Torus Cube = new(3, 3, 3);

    public HostFixture(NodeOptions? options = null, Coordinate? self = null)
    {
        Self = self ?? new Coordinate(1, 1, 1);
        Host = new NodeHost(Self, Cube, Driver, Pool, options ?? new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false });
        foreach (var port in Ports.All)
        {
            Links[(int)port] = new FakeLink();
            Host.Attach(port, Links[(int)port]);
        }
    }

    public Coordinate Self { get; }

    public ManualDriver Driver { get; } = new();

    public FramePool Pool { get; } = new();

    public NodeHost Host { get; }

    public FakeLink[] Links { get; } = new FakeLink[Ports.Count];

    public FakeLink Link(Port port) => Links[(int)port];

    public Coordinate NeighbourOn(Port port) => Cube.Neighbour(Self, port);

    /// <summary>A valid frame as if sent by <paramref name="source"/>, from the pool.</summary>
    public Frame Build(byte serviceId, Coordinate source, Coordinate destination, ReadOnlySpan<byte> payload, FrameFlags flags = FrameFlags.None, byte ttl = FrameLayout.DefaultTtl, ReadOnlySpan<byte> key = default)
    {
        var frame = Pool.Rent();
        var header = new FrameHeader(serviceId, source, destination, flags, ttl);
        frame.Length = FrameCodec.Write(frame.Buffer, ref header, key, payload);
        return frame;
    }

    /// <summary>Hands <paramref name="frame"/> to the host as if it arrived on <paramref name="port"/> from that neighbour.</summary>
    public void Receive(Port port, Frame frame) => Host.OnFrameReceived(port, frame);

    /// <summary>Frames the link monitor sent on <paramref name="port"/> (beacons), removed from the link's record.</summary>
    public List<Frame> TakeSent(Port port)
    {
        var sent = new List<Frame>(Link(port).Sent);
        Link(port).Sent.Clear();
        return sent;
    }

    public static byte ServiceOf(Frame frame)
    {
        Assert.Equal(FrameError.None, FrameCodec.TryRead(frame.Span, Cube, out var header));
        return header.ServiceId;
    }
}
