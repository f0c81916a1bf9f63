using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Links.RawEthernet;

public enum LinkEventKind : byte
{
    FrameReceived,
    TransmitReady,
    CarrierChanged,
}

/// <summary>One thing a link's I/O thread hands to the node's event loop. A struct, so posting allocates nothing.</summary>
public readonly struct LinkEvent
{
    private LinkEvent(LinkEventKind kind, Port port, Frame? frame, bool up)
    {
        Kind = kind;
        Port = port;
        Frame = frame;
        Up = up;
    }

    public LinkEventKind Kind { get; }

    public Port Port { get; }

    /// <summary>The received frame, owned by whoever holds the event.</summary>
    public Frame? Frame { get; }

    /// <summary>The new carrier state of a <see cref="LinkEventKind.CarrierChanged"/> event.</summary>
    public bool Up { get; }

    public static LinkEvent Received(Port port, Frame frame) => new(LinkEventKind.FrameReceived, port, frame, false);

    public static LinkEvent TransmitReady(Port port) => new(LinkEventKind.TransmitReady, port, null, false);

    public static LinkEvent Carrier(Port port, bool up) => new(LinkEventKind.CarrierChanged, port, null, up);
}

/// <summary>
/// Where a link transport's I/O thread posts its events: the node's event loop. Every member is thread-safe.
/// </summary>
public interface ILinkEventSink
{
    /// <summary>Queues an event; false when the loop's inbox is full (the caller backs off and retries).</summary>
    bool TryPost(in LinkEvent linkEvent);

    /// <summary>Wakes the loop if it sleeps; called once after a burst of posts rather than per event.</summary>
    void Wake();

    void Log(LogLevel level, string message);
}
