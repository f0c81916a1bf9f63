using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Links.RawEthernet;

/// <summary>
/// A port's link over a real (or veth) Ethernet interface, whichever <see cref="LinkDriver"/> moves its frames: what
/// the node's event loop, the node's status and the link probe need from it. The contract every driver keeps:
/// <list type="bullet">
/// <item>one I/O thread owns the receive side, posts received frames (pooled, never allocated per frame), carrier
/// changes and <see cref="LinkEventKind.TransmitReady"/> notices to the <see cref="ILinkEventSink"/>, and reads the
/// kernel's drop counter every carrier poll;</item>
/// <item>the event loop fills the transmit ring (<see cref="ILinkTransport.TrySend"/>, which stamps our MAC as source
/// and the learned neighbour, or broadcast for beacons and until learned, as destination) and hands it to the kernel
/// in <see cref="Flush"/>; a full kernel buffer is waited out through a TransmitReady notice, never by blocking;</item>
/// <item>frames longer than <see cref="MaxFrameSize"/> are dropped and counted, frames this host sent never come back
/// as received ones, and only frames with the CamCube EtherType are delivered.</item>
/// </list>
/// </summary>
public interface IRawEthernetLink : ILinkTransport, IDisposable
{
    LinkDriver Driver { get; }

    string InterfaceName { get; }

    /// <summary>The port this link serves; set by <see cref="Start"/>.</summary>
    Port Port { get; }

    RawLinkCounters Counters { get; }

    MacAddress LocalMac { get; }

    /// <summary>The neighbour's address as learned from its frames; broadcast until the first valid frame.</summary>
    MacAddress PeerMac { get; }

    int Mtu { get; }

    int MaxFrameSize { get; }

    /// <summary>Linux thread id of the I/O thread (for CPU accounting from /proc); 0 before it starts.</summary>
    int IoThreadId { get; }

    /// <summary>Bytes the I/O thread has allocated, sampled at every carrier check and when it exits.</summary>
    long IoThreadAllocatedBytes { get; }

    /// <summary>Frames waiting in the transmit ring.</summary>
    int PendingTransmit { get; }

    /// <summary>Starts the I/O thread, which posts this link's events for <paramref name="port"/> to <paramref name="sink"/>.</summary>
    void Start(Port port, ILinkEventSink sink);

    /// <summary>
    /// Hands the transmit ring to the kernel (event loop, after each batch of events). Returns true when the ring had
    /// filled up and now has room, i.e. the host should be told <see cref="ILinkEvents.OnTransmitReady"/>.
    /// </summary>
    bool Flush();

    /// <summary>The I/O thread reported the kernel ready to take frames again (event loop).</summary>
    void OnWritable();

    /// <summary>The event loop learned of a carrier change from this link's I/O thread.</summary>
    void ApplyCarrier(bool up);

    /// <summary>Learns the neighbour's MAC address from a frame that passed validation (event loop).</summary>
    void LearnPeer(ReadOnlySpan<byte> validFrame);

    /// <summary>Stops and joins the I/O thread; the link can still flush. Idempotent.</summary>
    void Stop();
}
