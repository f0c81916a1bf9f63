using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl.Channel;

/// <summary>
/// How job control reaches the other servers and learns which are alive: on a cube, key routing over the torus
/// (<see cref="RoutedControlNetwork"/>); where servers hang off switches instead, the switched network's own path
/// and failure detector. The one seam between job control and the network it runs on.
/// </summary>
public interface IControlNetwork
{
    /// <summary>
    /// Sends a job-control frame payload to <paramref name="destination"/>, best effort (the channel retries). False
    /// when this server's queue toward it is full: the network then calls the service's
    /// <see cref="Runtime.Node.IService.OnSendReady"/> when it has room, and the caller tries again.
    /// </summary>
    bool TrySend(Coordinate destination, ReadOnlySpan<byte> payload);

    /// <summary>Whether <paramref name="server"/> is reachable in this server's current view.</summary>
    bool IsReachable(Coordinate server);

    /// <summary>Tells <paramref name="listener"/> (on the event loop) when servers become unreachable or reachable again.</summary>
    void AddOwnershipListener(IOwnershipListener listener);
}
