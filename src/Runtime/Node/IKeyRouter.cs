namespace Camdoop.Runtime.Node;

/// <summary>
/// Receives every routed frame (key-routed or coordinate-routed) before its service does, at every hop, and decides whether to forward it
/// (<see cref="INodeContext.TryForward"/>) or deliver it here (<see cref="INodeContext.Deliver"/>).
/// The key-based routing service installs itself as the node's router.
/// </summary>
public interface IKeyRouter
{
    void OnKeyRoutedFrame(in InboundFrame frame);
}
