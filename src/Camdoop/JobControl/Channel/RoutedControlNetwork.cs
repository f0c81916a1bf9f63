using Camdoop.KeyRouting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl.Channel;

/// <summary>Job control over the torus: coordinate-routed frames over the shortest live path, and key routing's view of who is alive.</summary>
public sealed class RoutedControlNetwork(KeyRoutingService routing, INodeContext node) : IControlNetwork
{
    private readonly KeyRoutingService _routing = routing ?? throw new ArgumentNullException(nameof(routing));
    private readonly INodeContext _node = node ?? throw new ArgumentNullException(nameof(node));

    // No route for a moment loses the frame: the channel's retries cover it.
    public bool TrySend(Coordinate destination, ReadOnlySpan<byte> payload)
    {
        if (_routing.RouteTo(WellKnownServices.JobControl, destination, payload, out var port) != SendStatus.QueueFull)
        {
            return true;
        }
        _node.RequestSendReady(WellKnownServices.JobControl, port);
        return false;
    }

    public bool IsReachable(Coordinate server) => _routing.IsReachable(server);

    public void AddOwnershipListener(IOwnershipListener listener) => _routing.AddOwnershipListener(listener);
}
