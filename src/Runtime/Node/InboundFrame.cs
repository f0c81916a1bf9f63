using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

/// <summary>A validated frame handed to a service. Its spans point into a pooled buffer that lives only for the call.</summary>
public readonly ref struct InboundFrame
{
    internal InboundFrame(Frame buffer, in FrameHeader header, Port arrivalPort, bool isLocal)
    {
        Buffer = buffer;
        Header = header;
        ArrivalPort = arrivalPort;
        IsLocal = isLocal;
        var span = buffer.Span;
        Key = FrameCodec.Key(span, header);
        Payload = FrameCodec.Payload(span, header);
    }

    public FrameHeader Header { get; }

    /// <summary>The port the frame came in on; meaningless when <see cref="IsLocal"/>.</summary>
    public Port ArrivalPort { get; }

    /// <summary>True when the frame was sent by this same server to itself (no link crossed).</summary>
    public bool IsLocal { get; }

    /// <summary>The 20-byte destination key of a key-routed frame, else empty.</summary>
    public ReadOnlySpan<byte> Key { get; }

    public ReadOnlySpan<byte> Payload { get; }

    internal Frame Buffer { get; }
}
