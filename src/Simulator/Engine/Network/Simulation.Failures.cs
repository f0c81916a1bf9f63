using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Network;

// Failure injection. Each call schedules the change at virtual time `at` (which may be now).
public sealed partial class Simulation
{
    /// <summary>
    /// Cuts the cable on <paramref name="port"/> of <paramref name="server"/> at <paramref name="at"/>: both
    /// directions lose carrier (both hosts see it at once) and frames in the rings and on the wire are lost.
    /// </summary>
    public void FailLink(Coordinate server, Port port, long at)
    {
        var link = Link(server, port);
        Schedule(at, () => SetCable(link, up: false));
    }

    /// <summary>Plugs the cable back in: carrier returns at both ends and beacons bring the link back up.</summary>
    public void RestoreLink(Coordinate server, Port port, long at)
    {
        var link = Link(server, port);
        Schedule(at, () => SetCable(link, up: true));
    }

    public bool IsLinkFailed(Coordinate server, Port port) => !Link(server, port).CarrierUp;

    /// <summary>
    /// Crashes <paramref name="server"/> at <paramref name="at"/>: its host stops and everything it holds or is
    /// transmitting is lost. Its links keep carrier, so neighbours notice only when its beacons stop; frames sent
    /// to it meanwhile are dropped on arrival.
    /// </summary>
    public void FailServer(Coordinate server, long at)
    {
        int index = IndexOf(server);
        Schedule(at, () => Crash(index));
    }

    /// <summary>
    /// Reboots a failed server at <paramref name="at"/> with fresh services (the configure callback runs again)
    /// and empty memory. Its data directory survives unless <paramref name="wipeData"/> is set.
    /// </summary>
    public void RestoreServer(Coordinate server, long at, bool wipeData = false)
    {
        int index = IndexOf(server);
        Schedule(at, () => Reboot(index, wipeData));
    }

    private void SetCable(SimulatedLink link, bool up)
    {
        if (link.CarrierUp == up)
        {
            return;
        }
        var peer = link.Peer;
        link.CarrierUp = up;
        peer.CarrierUp = up;
        if (!up)
        {
            link.DropAll();
            peer.DropAll();
        }
        if (!_failed[link.FromIndex])
        {
            _hosts[link.FromIndex]!.OnCarrierChanged(link.Port, up);
        }
        if (!_failed[peer.FromIndex])
        {
            _hosts[peer.FromIndex]!.OnCarrierChanged(peer.Port, up);
        }
    }

    private void Crash(int index)
    {
        if (_failed[index])
        {
            return;
        }
        _failed[index] = true;
        _hosts[index]!.Stop();
        for (int p = 0; p < Ports.Count; p++)
        {
            _links[(index * Ports.Count) + p].DropAll();
        }
    }

    private void Reboot(int index, bool wipeData)
    {
        if (!_failed[index])
        {
            return;
        }
        _failed[index] = false;
        _boots[index]++;
        if (wipeData)
        {
            string directory = DataDirectoryOf(Torus.CoordinateOf(index));
            if (Directory.Exists(directory))
            {
                Directory.Delete(directory, recursive: true);
            }
        }
        Boot(index);
    }
}
