using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

/// <summary>
/// A service running on every server (key routing, ping, Camdoop, ...). All callbacks come from the node's single
/// event loop; a service acts only through its <see cref="INodeContext"/>: it never reads the wall clock, sleeps,
/// or starts threads, so the same code runs on real links and in the simulator.
/// </summary>
public interface IService
{
    /// <summary>The service id carried in the frame header; unique per node.</summary>
    byte Id { get; }

    string Name { get; }

    /// <summary>Called once, after every service of the node is registered.</summary>
    void Start(INodeContext context);

    /// <summary>A frame for this service arrived (or was delivered locally). The frame is valid only during the call.</summary>
    void OnFrame(in InboundFrame frame);

    /// <summary>The link on <paramref name="port"/> went up or down.</summary>
    void OnLinkChanged(Port port, bool up)
    {
    }

    /// <summary>The service's queue on <paramref name="port"/> has room again after a send was refused.</summary>
    void OnSendReady(Port port)
    {
    }

    /// <summary>The node is shutting down.</summary>
    void Stop()
    {
    }
}
