using Camdoop.JobControl.Channel;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Experiments;

/// <summary>
/// Job control on a host of a simulated switched network, which has no torus to route over and no neighbours to
/// hear beacons from: a control frame leaves on the host's first NIC with carrier and the switches deliver it by its
/// destination; a host learns that another failed one liveness detection after the failure (the node's beacon
/// interval times its missed beacons), as a torus server learns it through its links, from <see cref="OnHostsLost"/>.
/// The switched network's failure detector is modelled, not simulated frame by frame: a real switched cluster's
/// comes from its cluster manager.
/// </summary>
internal sealed class SwitchedControlNetwork(NodeHost host) : IControlNetwork
{
    private readonly HashSet<Coordinate> _lost = [];
    private readonly List<IOwnershipListener> _listeners = [];

    public bool TrySend(Coordinate destination, ReadOnlySpan<byte> payload)
    {
        var header = new FrameHeader(WellKnownServices.JobControl, host.Self, destination);
        if (destination == host.Self)
        {
            host.DeliverLocal(ref header, default, payload);
            return true;
        }
        foreach (var port in Ports.All)
        {
            if (host.IsLinkUp(port))
            {
                if (host.TrySend(port, ref header, default, payload) != SendStatus.QueueFull)
                {
                    return true;
                }
                host.RequestSendReady(WellKnownServices.JobControl, port);
                return false;
            }
        }
        return true; // no NIC up: lost, and the channel's retries cover it
    }

    public bool IsReachable(Coordinate server) => server == host.Self || !_lost.Contains(server);

    public void AddOwnershipListener(IOwnershipListener listener)
    {
        ArgumentNullException.ThrowIfNull(listener);
        _listeners.Add(listener);
    }

    /// <summary>This host detects that <paramref name="lost"/> failed (called on its partition's thread at the detection time).</summary>
    public void OnHostsLost(IReadOnlyList<Coordinate> lost)
    {
        var news = lost.Where(_lost.Add).ToList();
        if (news.Count == 0 || host.IsHalted)
        {
            return;
        }
        var change = new OwnershipChange(news, [], host.Torus.Count - _lost.Count);
        foreach (var listener in _listeners)
        {
            listener.OnOwnershipChanged(change);
        }
    }
}
