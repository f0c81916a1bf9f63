namespace Camdoop.KeyRouting;

/// <summary>
/// Told when the set of servers reachable from this server changes, which is exactly when key ownership can change
/// (the Camdoop paper, §3, §4.2: "the API notifies all servers that a server has crashed and that its vertex has been remapped").
/// <para>Contract: called on the node's event loop, after the routing tables were recomputed and never inside
/// a send or a frame callback of the routing service. During the call (and after it) <see cref="KeyRoutingService.Owner"/>
/// answers with the new view, so a listener re-asks the owner of each key it cares about and compares with
/// the owner it remembered. Link failures that leave every server reachable change no owner and are not reported;
/// their traffic is simply rerouted. Views of different servers agree once link state has converged.</para>
/// </summary>
public interface IOwnershipListener
{
    void OnOwnershipChanged(OwnershipChange change);
}

/// <summary>
/// Told after the routes were recomputed for a change of link state, whether or not any owner changed (a cut cable
/// changes paths only): a service that keeps per-destination state on the first hop (which port a stream's frames
/// leave on) looks again. Same calling contract as <see cref="IOwnershipListener"/>; called before it.
/// </summary>
public interface IRouteListener
{
    void OnRoutesChanged();
}

/// <summary>Which servers became unreachable or reachable again since the previous notification.</summary>
public sealed record OwnershipChange(
    IReadOnlyList<Runtime.Topology.Coordinate> BecameUnreachable,
    IReadOnlyList<Runtime.Topology.Coordinate> BecameReachable,
    int ReachableCount);
