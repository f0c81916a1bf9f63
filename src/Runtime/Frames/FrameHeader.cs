using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Frames;

/// <summary>The CamCube header of a frame. Ethernet addresses belong to the link transport and are not here.</summary>
public struct FrameHeader
{
    public byte ServiceId;
    public FrameFlags Flags;
    public byte Ttl;
    public Coordinate Source;
    public Coordinate Destination;
    public ushort PayloadLength;

    public readonly bool IsKeyRouted => (Flags & FrameFlags.KeyRouted) != 0;

    public readonly int PayloadOffset => FrameLayout.PayloadOffset(IsKeyRouted);

    public FrameHeader(byte serviceId, Coordinate source, Coordinate destination, FrameFlags flags = FrameFlags.None, byte ttl = FrameLayout.DefaultTtl)
    {
        ServiceId = serviceId;
        Source = source;
        Destination = destination;
        Flags = flags;
        Ttl = ttl;
        PayloadLength = 0;
    }
}
