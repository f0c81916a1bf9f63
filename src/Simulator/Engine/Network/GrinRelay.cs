using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;

namespace Camdoop.Simulator.Network;

/// <summary>
/// A GRIN server's forwarding for its neighbours, below its services (the host's transit queues): a frame a
/// neighbour sent over their cable goes up this server's NIC, unless this server is where the flow enters its
/// destination, and a frame that came down the NIC for a neighbour goes over that neighbour's cable. One hop over a
/// GRIN cable at each end at most, as the GRIN paper's routing allows.
/// </summary>
internal sealed class GrinRelay(SwitchFabric fabric, int server, Torus torus) : IFrameRelay
{
    private const Port Nic = (Port)0;

    public bool TryRoute(in FrameHeader header, ReadOnlySpan<byte> frame, Port arrival, out Port port)
    {
        int source = torus.IndexOf(header.Source);
        int destination = torus.IndexOf(header.Destination);
        int entry = fabric.EntryServer(source, destination, TcpWire.ConnectionOf(frame, header));
        if (arrival == Nic || entry == server)
        {
            int cable = fabric.GrinPortTo(server, destination);
            port = (Port)Math.Max(cable, 0);
            return cable >= 0;
        }
        port = Nic;
        return true;
    }
}
