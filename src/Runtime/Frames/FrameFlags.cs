namespace Camdoop.Runtime.Frames;

[Flags]
public enum FrameFlags : byte
{
    None = 0,

    /// <summary>A 20-byte destination key follows the fixed header; the key router forwards the frame hop by hop.</summary>
    KeyRouted = 1,

    /// <summary>Routed hop by hop to the header's destination coordinate (not to a key's owner).</summary>
    CoordinateRouted = 2,

    Routed = KeyRouted | CoordinateRouted,

    /// <summary>
    /// A small control frame (a service's ack or request, not its data): every server that forwards it queues it
    /// apart, ahead of the frames it forwards for the same service, so a path whose queues are full of data neither
    /// drops nor delays it. Where it starts, it queues as the service's other frames do.
    /// </summary>
    Urgent = 4,

    /// <summary>Bits the owning service may use for its own purposes.</summary>
    Service0 = 0x10,
    Service1 = 0x20,
    Service2 = 0x40,
    Service3 = 0x80,

    Known = KeyRouted | CoordinateRouted | Urgent | Service0 | Service1 | Service2 | Service3,
}
