using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Links;

/// <summary>
/// One port's link to a neighbour: a simulated wire or a raw-Ethernet interface. The host fills the transport's
/// transmit ring from the service queues; the transport reports back through <see cref="ILinkEvents"/>, always on
/// the node's event loop.
/// </summary>
public interface ILinkTransport
{
    /// <summary>True when the transmit ring has room for another frame.</summary>
    bool CanSend { get; }

    /// <summary>Physical carrier (cable plugged, peer interface present).</summary>
    bool CarrierUp { get; }

    /// <summary>Hands a frame to the link. On true the transport owns the frame and releases it when sent.</summary>
    bool TrySend(Frame frame);
}

/// <summary>What a link transport tells its node. Called on the node's event loop only.</summary>
public interface ILinkEvents
{
    /// <summary>A frame arrived; the host owns it from here on.</summary>
    void OnFrameReceived(Topology.Port port, Frame frame);

    /// <summary>The transmit ring of <paramref name="port"/> has room again.</summary>
    void OnTransmitReady(Topology.Port port);

    void OnCarrierChanged(Topology.Port port, bool up);
}
