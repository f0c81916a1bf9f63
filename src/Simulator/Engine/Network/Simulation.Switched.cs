using System.Globalization;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Network;

// Switched networks: the servers' NICs and the switches' ports as link directions, the same kind a torus cable has,
// so every link statistic, the partitions and the event order treat a switch port like a server's port.
public sealed partial class Simulation
{
    /// <summary>
    /// Link directions of a switched network: server index x 6 + NIC for a server's (ports with no cable get a link
    /// with no carrier, never used), then every switch's ports in switch order; and the switches.
    /// </summary>
    private (SimulatedLink[] Links, SimulatedSwitch[] Switches) BuildSwitchedLinks(SwitchFabric fabric, Xoshiro256StarStar lossRoot)
    {
        int n = fabric.Servers;
        var switchBase = new int[fabric.SwitchCount];
        int total = n * Ports.Count;
        for (int s = 0; s < fabric.SwitchCount; s++)
        {
            switchBase[s] = total;
            total += fabric.PortCounts[s];
        }
        var links = new SimulatedLink[total];
        int ring = _options.TransmitRingDepth;
        double loss = _options.LossRate;

        int LinkIndex(int node, int port) => node < n ? (node * Ports.Count) + port : switchBase[node - n] + port;
        Coordinate CoordinateOfNode(int node) => node < n ? Torus.CoordinateOf(node) : default;
        string NameOf(int node, int port) => node < n
            ? (node >= Servers.Count && AggBoxes is not null
                ? string.Create(CultureInfo.InvariantCulture, $"{AggBoxes.NameOf(node)} {Torus.CoordinateOf(node)} nic{port}")
                : string.Create(CultureInfo.InvariantCulture, $"{Torus.CoordinateOf(node)} nic{port}"))
            : string.Create(CultureInfo.InvariantCulture, $"{fabric.SwitchNames[node - n]} port{port}");
        SimulatedLink Direction(int from, int fromPort, int to, int toPort, long rate)
        {
            int index = LinkIndex(from, fromPort);
            // A server's NIC ring is the NIC's; a switch port's is its output queue, bounded in bytes by the switch.
            int depth = from < n ? ring : int.MaxValue;
            return new SimulatedLink(index, from, CoordinateOfNode(from), (Port)fromPort, to, CoordinateOfNode(to), (Port)toPort, depth, loss,
                lossRoot.Fork((ulong)index))
            {
                Label = $"{NameOf(from, fromPort)} -> {NameOf(to, toPort)}",
                OwnRateBitsPerSecond = rate == _options.LinkRateBitsPerSecond ? 0 : rate,
            };
        }

        foreach (var cable in fabric.Cables)
        {
            var ab = Direction(cable.A, cable.APort, cable.B, cable.BPort, cable.RateBitsPerSecond);
            var ba = Direction(cable.B, cable.BPort, cable.A, cable.APort, cable.RateBitsPerSecond);
            ab.Peer = ba;
            ba.Peer = ab;
            links[ab.Index] = ab;
            links[ba.Index] = ba;
        }
        for (int i = 0; i < links.Length; i++)
        {
            if (links[i] is null)
            {
                // A server port with no cable (one NIC): carrier down, so its host never sends on it.
                int server = i / Ports.Count;
                var c = Torus.CoordinateOf(server);
                var unplugged = new SimulatedLink(i, server, c, (Port)(i % Ports.Count), server, c, (Port)(i % Ports.Count), ring, 0, lossRoot.Fork((ulong)i))
                {
                    CarrierUp = false,
                    Label = $"{NameOf(server, i % Ports.Count)} (no cable)",
                };
                unplugged.Peer = unplugged;
                links[i] = unplugged;
            }
        }
        foreach (var link in links)
        {
            link.Sender = _partitionOf[link.FromIndex];
            link.Receiver = _partitionOf[link.ToIndex];
        }
        var switches = new SimulatedSwitch[fabric.SwitchCount];
        for (int s = 0; s < switches.Length; s++)
        {
            var ports = links.AsSpan(switchBase[s], fabric.PortCounts[s]).ToArray();
            switches[s] = new SimulatedSwitch(n + s, s, fabric, ports, Torus, _options.Network!);
        }
        return (links, switches);
    }
}
