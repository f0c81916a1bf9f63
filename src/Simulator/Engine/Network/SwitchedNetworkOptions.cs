namespace Camdoop.Simulator.Network;

/// <summary>
/// A switched network in place of the torus: its shape, the servers' NICs and the switches' output queues. Every
/// cable has the torus links' rate, propagation and forwarding latency (<see cref="SimulationOptions"/>).
/// </summary>
public sealed record SwitchedNetworkOptions
{
    public NetworkKind Kind { get; init; } = NetworkKind.Switch;

    /// <summary>The class that builds the network <see cref="Kind"/> names and answers for it.</summary>
    public NetworkTopology Topology => Kind.Topology();

    /// <summary>NICs per server, each cabled to the server's switch: 1, or 6 teamed (the "Switch (6 Gbps)" case).</summary>
    public int NicsPerServer { get; init; } = 1;

    /// <summary>
    /// Bytes a switch port's output queue holds, the frame being serialised included; a frame that does not fit is
    /// dropped (drop-tail). 256 KiB, 28 jumbo frames, is a shallow-buffered data-centre switch's share per port.
    /// </summary>
    public int PortBufferBytes { get; init; } = 256 * 1024;

    /// <summary>
    /// Queue length in bytes at or above which a switch marks an ECN-capable frame "congestion experienced" as it
    /// joins the queue (the instantaneous threshold DCTCP expects); 0 turns marking off.
    /// </summary>
    public int EcnThresholdBytes { get; init; }

    /// <summary>Servers per rack (<see cref="RackTopology"/>, and the networks built on it).</summary>
    public int RackSize { get; init; } = 40;

    /// <summary>Rack downlink to uplink capacity (<see cref="RackTopology"/>): 4 means 1:4 oversubscribed.</summary>
    public int Oversubscription { get; init; } = 4;

    /// <summary>Ports per switch of a fat tree (<see cref="FatTreeTopology"/>, even); 0 picks the smallest that holds every server.</summary>
    public int FatTreeK { get; init; }

    /// <summary>The agg boxes of a NetAgg network (<see cref="NetAggTopology"/>): where, their cables' rate and their processing rate.</summary>
    public AggBoxOptions AggBoxes { get; init; } = new();

    /// <summary>
    /// Free ports of each server cabled to other servers (<see cref="GrinTopology"/>): 0 to 5, since one of the
    /// six ports is the NIC. 0 is the racks network exactly.
    /// </summary>
    public int FreePorts { get; init; }

    /// <summary>The network's name in reports: its kind's, and a GRIN network's degree after it (grin2: two free ports cabled).</summary>
    public string Label => Topology.Label(this);

    internal void Validate()
    {
        if (Topology.HasTorusLinks)
        {
            throw new ArgumentException("a switched network is a switch, racks, a fat tree, netagg or grin");
        }
        if (NicsPerServer is not (1 or 6))
        {
            throw new ArgumentOutOfRangeException(nameof(NicsPerServer), NicsPerServer, "a server has 1 NIC or 6 teamed");
        }
        if (Topology.CablesFreePorts && NicsPerServer != 1)
        {
            throw new ArgumentOutOfRangeException(nameof(NicsPerServer), NicsPerServer, "a GRIN server has one NIC and its free ports for cables");
        }
        if (FreePorts < 0 || FreePorts > 5 || (FreePorts > 0 && !Topology.CablesFreePorts))
        {
            throw new ArgumentOutOfRangeException(nameof(FreePorts), FreePorts, "free ports are 0 to 5, on a GRIN network only");
        }
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(PortBufferBytes);
        ArgumentOutOfRangeException.ThrowIfNegative(EcnThresholdBytes);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(RackSize);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(Oversubscription);
        if (FatTreeK < 0 || FatTreeK % 2 != 0)
        {
            throw new ArgumentOutOfRangeException(nameof(FatTreeK), FatTreeK, "a fat tree's k is even (0 picks one)");
        }
        ArgumentNullException.ThrowIfNull(AggBoxes);
        AggBoxes.Validate();
    }
}
