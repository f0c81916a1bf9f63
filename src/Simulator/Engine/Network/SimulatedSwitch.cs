using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;

namespace Camdoop.Simulator.Network;

/// <summary>
/// An output-queued switch: a frame that arrives is forwarded to a port on a shortest path to its destination
/// server (equal-cost ports chosen by a hash of the source, the destination and the switch, so a flow keeps one
/// path), and joins that port's queue, which is the port's link direction (<see cref="SimulatedLink"/>): its
/// transmit ring, bounded here in bytes. A frame that does not fit is dropped (drop-tail); one that joins a queue
/// at or above the ECN threshold is marked if ECN-capable. Runs on its partition's thread, like a server.
/// </summary>
public sealed class SimulatedSwitch
{
    private readonly SwitchFabric _fabric;
    private readonly SimulatedLink[] _ports;
    private readonly Torus _torus;
    private readonly int _bufferBytes;
    private readonly int _ecnThreshold;
    private readonly bool _perConnection;

    internal SimulatedSwitch(int node, int number, SwitchFabric fabric, SimulatedLink[] ports, Torus torus, SwitchedNetworkOptions options)
    {
        Node = node;
        Number = number;
        _fabric = fabric;
        _ports = ports;
        _torus = torus;
        _bufferBytes = options.PortBufferBytes;
        _ecnThreshold = options.EcnThresholdBytes;
        // Equal-cost paths are chosen per connection (a 5-tuple hash) where the topology spreads a host pair's
        // connections (NetAgg's), elsewhere per host pair.
        _perConnection = options.Topology.EcmpPerConnection;
    }

    /// <summary>Node index: after every server's.</summary>
    public int Node { get; }

    /// <summary>Switch number, 0-based.</summary>
    public int Number { get; }

    public string Name => _fabric.SwitchNames[Number];

    /// <summary>The output side of every port: the link direction leaving it.</summary>
    public IReadOnlyList<SimulatedLink> Ports => _ports;

    public long FramesForwarded { get; private set; }

    /// <summary>Frames dropped because the output queue was full.</summary>
    public long BufferDrops { get; private set; }

    /// <summary>Frames marked "congestion experienced".</summary>
    public long EcnMarks { get; private set; }

    /// <summary>Frames dropped as malformed or with no route (a coordinate outside the network), or link-local (beacons).</summary>
    public long Undeliverable { get; private set; }

    /// <summary>Longest any output queue of this switch has been, in bytes.</summary>
    public int PeakQueueBytes { get; private set; }

    internal void OnFrame(Frame frame)
    {
        var span = frame.Span;
        if (FrameCodec.TryRead(span, _torus, out var header) != FrameError.None || header.ServiceId == WellKnownServices.LinkMonitor)
        {
            // Beacons prove a torus cable's wiring and mean nothing across a switch.
            Undeliverable++;
            frame.Release();
            return;
        }
        int source = _torus.IndexOf(header.Source);
        int destination = _torus.IndexOf(header.Destination);
        if (_fabric.HasGrinCables)
        {
            // GRIN: towards the server the flow enters its destination through (the destination or a neighbour).
            destination = _fabric.EntryServer(source, destination, TcpWire.ConnectionOf(span, header));
        }
        var route = _fabric.Route(Number, destination);
        if (route.Length == 0)
        {
            Undeliverable++;
            frame.Release();
            return;
        }
        uint flow = _perConnection && route.Length > 1 ? TcpWire.ConnectionOf(span, header) : 0;
        var port = _ports[route.Length == 1 ? route[0] : route[(int)(Mix(source, destination, Number, flow) % (uint)route.Length)]];
        int queued = port.QueuedBytes;
        if (queued + frame.Length > _bufferBytes || !port.CanSend)
        {
            BufferDrops++;
            frame.Release();
            return;
        }
        if (_ecnThreshold > 0 && queued >= _ecnThreshold && TcpWire.TryMarkCongestion(span, header))
        {
            EcnMarks++;
        }
        port.TrySend(frame);
        FramesForwarded++;
        if (queued + frame.Length > PeakQueueBytes)
        {
            PeakQueueBytes = queued + frame.Length;
        }
    }

    public override string ToString() => Name;

    /// <summary>ECMP hash: the same (source, destination, flow) always takes the same port at a given switch.</summary>
    private static uint Mix(int source, int destination, int sw, uint flow) =>
        FlowHash.Finish(((ulong)(uint)source << 32) ^ (uint)destination ^ ((ulong)(uint)sw * 0x9E3779B97F4A7C15UL) ^ ((ulong)flow * 0xD6E8FEB86659FD93UL));
}
