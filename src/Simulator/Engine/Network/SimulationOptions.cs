using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Energy;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Network;

/// <summary>How a simulated CamCube is built. Times in nanoseconds, rates in bits per second.</summary>
public sealed record SimulationOptions
{
    /// <summary>
    /// Node options suited to the simulator: a healthy cube starts with its links up, and a service's exception
    /// surfaces in the test that caused it instead of being counted and logged. Service queues hold 16 frames per
    /// port (1.2 ms of a 1 Gbps link in jumbo frames) instead of the runtime's 64: with every queue of an 8x8x8
    /// cube full, 64 would pin 1.8 GB of frame buffers and make the simulation cache-bound.
    /// </summary>
    public static readonly NodeOptions DefaultNodeOptions = new()
    {
        QueueCapacity = 16,
        AssumeLinksUpAtStart = true,
        IsolateServiceFaults = false,
        BeaconInterval = 10 * SimTime.Millisecond,
        BeaconMisses = 3,
    };

    /// <summary>Names the servers (and sizes the torus when there is no switched network).</summary>
    public required Torus Torus { get; init; }

    /// <summary>
    /// The servers when <see cref="Torus"/> also names appliances (NetAgg's agg boxes): the servers' torus, whose
    /// hosts are a prefix of <see cref="Torus"/>'s index order (the same y and z sizes, fewer x-planes). Null: every
    /// host is a server.
    /// </summary>
    public Torus? Servers { get; init; }

    /// <summary>
    /// A switched network in place of the torus's cables (null: the torus). The servers keep their coordinates;
    /// their NICs are cabled to switches, and liveness beacons, which mean nothing across a switch, are not sent.
    /// </summary>
    public SwitchedNetworkOptions? Network { get; init; }

    /// <summary>How the servers are wired: <see cref="Network"/>'s topology, or the torus's without one.</summary>
    public NetworkTopology Topology => Network?.Topology ?? NetworkKind.Torus.Topology();

    /// <summary>Seeds <see cref="Simulation.Random"/> and the loss injection; same seed and inputs, same run.</summary>
    public ulong Seed { get; init; } = 1;

    public long LinkRateBitsPerSecond { get; init; } = 1_000_000_000;

    public long PropagationDelay { get; init; } = 500;

    /// <summary>Per-hop latency between a frame's last bit arriving and the receiving node handling it.</summary>
    public long ForwardingLatency { get; init; } = 10 * SimTime.Microsecond;

    /// <summary>Wire bytes per frame beyond the frame itself: preamble and start delimiter (8), FCS (4), inter-frame gap (12).</summary>
    public int FramingOverheadBytes { get; init; } = 24;

    /// <summary>Frames a port's NIC holds, the one being serialised included. The host keeps it filled from its service queues.</summary>
    public int TransmitRingDepth { get; init; } = 2;

    /// <summary>Options of every node; <see cref="NodeOptions.DataDirectory"/> is replaced by the node's own directory.</summary>
    public NodeOptions Node { get; init; } = DefaultNodeOptions;

    /// <summary>
    /// Rates at which servers do the work their services declare (map, merge, reduce), or null to make that work
    /// free in virtual time (the default, as in the Camdoop paper's simulator).
    /// </summary>
    public ComputeRates? Compute { get; init; }

    /// <summary>
    /// The energy model every port accounts under (<see cref="Simulation.MeasureEnergy"/>); null measures none. Under
    /// EEE, links sleep and wake, which delays frames; legacy and ideal leave every time as it is without one.
    /// </summary>
    public EnergyModel? Energy { get; init; }

    /// <summary>Initial random loss probability on every directed link.</summary>
    public double LossRate { get; init; }

    /// <summary>Parent of the run directory; default: the system temp directory's camdoop-sim folder.</summary>
    public string? DataRoot { get; init; }

    /// <summary>Whether <see cref="Simulation.Dispose"/> deletes the run directory it created.</summary>
    public bool DeleteDataOnDispose { get; init; } = true;

    /// <summary>
    /// Threads to run the cube on: with more than one, the servers are dealt out to partitions (blocks of neighbouring
    /// servers, several per thread) that run in parallel, each synchronised with the partitions that have links into
    /// it. The run is the same whatever the number.
    /// </summary>
    public int Threads { get; init; } = 1;

    /// <summary>Fold every event into <see cref="Simulation.Trace"/>'s hash.</summary>
    public bool TraceEvents { get; init; }

    /// <summary>With <see cref="TraceEvents"/>, also keep this many first events as text.</summary>
    public int TraceLines { get; init; }

    /// <summary>Receives node log entries at or above <see cref="MinLogLevel"/>. Warnings and errors are also kept in <see cref="Simulation.Warnings"/>.</summary>
    public Action<LogEntry>? LogSink { get; init; }

    public LogLevel MinLogLevel { get; init; } = LogLevel.Info;

    /// <summary>At most this many warnings and errors are kept; the rest are only counted.</summary>
    public int MaxKeptWarnings { get; init; } = 10_000;

    internal void Validate()
    {
        ArgumentNullException.ThrowIfNull(Torus);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(LinkRateBitsPerSecond);
        ArgumentOutOfRangeException.ThrowIfNegative(PropagationDelay);
        ArgumentOutOfRangeException.ThrowIfNegative(ForwardingLatency);
        ArgumentOutOfRangeException.ThrowIfNegative(FramingOverheadBytes);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(TransmitRingDepth);
        ArgumentNullException.ThrowIfNull(Node);
        Network?.Validate();
        if (Servers is not null && (Servers.SizeY != Torus.SizeY || Servers.SizeZ != Torus.SizeZ || Servers.SizeX > Torus.SizeX))
        {
            throw new ArgumentException($"the servers ({Servers}) are not a prefix of the hosts ({Torus})", nameof(Servers));
        }
        if (Servers is not null && Servers.Count != Torus.Count && !Topology.HasAggBoxes)
        {
            throw new ArgumentException("hosts beyond the servers are agg boxes: only a netagg network has them", nameof(Servers));
        }
        if (LossRate is < 0 or > 1 || double.IsNaN(LossRate))
        {
            throw new ArgumentOutOfRangeException(nameof(LossRate), LossRate, "a loss rate is a probability");
        }
        ArgumentOutOfRangeException.ThrowIfNegative(TraceLines);
        Compute?.Validate();
        Energy?.Validate();
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(Threads);
    }
}
