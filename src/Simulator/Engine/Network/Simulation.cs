using System.Globalization;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Network;

/// <summary>
/// A packet-level simulated CamCube: one <see cref="NodeHost"/> per server running the very same services as a
/// real server, full-duplex simulated links between torus neighbours, and events in virtual time (nanoseconds).
/// Deterministic: the same options, seed and inputs give the same run, whatever <see cref="SimulationOptions.Threads"/>.
/// <para>
/// The servers are dealt out to partitions (contiguous blocks), several per thread, each with its own event queue.
/// Partitions run in parallel, each at most a link delay (<see cref="Lookahead"/>) ahead of the partitions with links
/// into it: no frame they send later can arrive sooner, so frames cross partitions through inboxes and no partition
/// ever sees one in its past (conservative parallel simulation, <see cref="PartitionWorkers"/>). Events due at the
/// same time are ordered by what they concern (<see cref="EventOrder"/>), so any split gives the same run.
/// </para>
/// <para>
/// Usage: construct, <see cref="Configure"/> the services every node boots with, <see cref="Start"/>, then drive
/// it with <see cref="RunUntil(long)"/> / <see cref="RunUntil(Func{bool}, long, int)"/> / <see cref="Step"/>;
/// inject failures with <see cref="FailServer"/>, <see cref="FailLink"/> and their restores. Drive it from one
/// thread; scheduled actions run on that thread while every partition is paused.
/// </para>
/// </summary>
public sealed partial class Simulation : IDisposable
{
    // 32 rather than 16: the busy region near a reducer spreads over more partitions for the threads to share. On
    // 8x8x8 R = 1 S = 0.5 the simulation took about 4 % less wall time on two threads (7.19 -> 6.91 s, means of eight
    // alternating pairs; single pairs vary more than that). 64 was no better; R = 512 was unchanged within the noise.
    private const int PartitionsPerThread = 32;

    // Free frames a partition keeps between parallel runs, per server in it (see BalanceFramePools): 256 per partition
    // of 8x8x8 on two threads at 16 partitions per thread. A fixed count per partition kept more idle frames the more
    // partitions there were.
    private const int FramesKeptFreePerServer = 16;

    private static long s_runs;

    private readonly SimulationOptions _options;
    private readonly NodeHost?[] _hosts;
    private readonly int[] _boots;
    private readonly bool[] _failed;
    private readonly ServerCompute?[]? _compute;
    private readonly SimulatedLink[] _links;
    private readonly SimulatedSwitch[] _switches;
    private readonly SwitchFabric? _grin;
    private readonly SimulationPartition[] _partitions;
    private readonly int _framesKeptFree;
    private readonly SimulationPartition[] _partitionOf;
    private readonly int _threads;
    private readonly FramePool _spareFrames = new(threadSafe: false);
    private readonly List<LogEntry> _warnings = [];
    private readonly Lock _logLock = new();
    private Action<NodeHost>? _configure;
    private bool _started;
    private bool _disposed;

    public Simulation(SimulationOptions options, Action<NodeHost>? configure = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        _options = options;
        _configure = configure;
        Torus = options.Torus;
        int n = Torus.Count;
        if ((long)n * (Ports.Count + 1) > EventOrder.MaxEntity)
        {
            throw new ArgumentException($"a {Torus} torus has more servers than the simulator can order events for", nameof(options));
        }
        Servers = options.Servers ?? Torus;
        var fabric = options.Network is null ? null : SwitchFabric.Build(options.Network, Servers.Count, n);
        _grin = fabric is { HasGrinCables: true } ? fabric : null;
        int nodes = n + (fabric?.SwitchCount ?? 0);
        _hosts = new NodeHost?[n];
        _boots = new int[n];
        _failed = new bool[nodes];
        Topology = options.Topology;
        AggBoxes = options.Network is null ? null : Topology.AggBoxes(options.Network, Servers.Count);
        if (options.Compute is not null || AggBoxes is { Boxes: > 0 })
        {
            // Servers' cores are priced only with SimulationOptions.Compute; an agg box's always, at its own rate.
            _compute = new ServerCompute?[n];
            for (int i = 0; i < Servers.Count && options.Compute is not null; i++)
            {
                _compute[i] = new ServerCompute(options.Compute);
            }
            for (int i = Servers.Count; i < Servers.Count + (AggBoxes?.Boxes ?? 0); i++)
            {
                _compute[i] = new ServerCompute(options.Network!.AggBoxes.Rates);
            }
        }
        Random = new Xoshiro256StarStar(options.Seed);
        var lossRoot = Random.Fork(ulong.MaxValue);
        Trace = options.TraceEvents ? new EventTrace(options.TraceLines) : null;
        ArrivalDelay = options.PropagationDelay + options.ForwardingLatency;
        _nsPerByte = 8_000_000_000L % options.LinkRateBitsPerSecond == 0 ? 8_000_000_000L / options.LinkRateBitsPerSecond : 0;

        // Servers dealt out in contiguous blocks of the index order (columns along z, then neighbouring columns), and
        // the partitions to threads in contiguous blocks too (PartitionWorkers): a frame between neighbours mostly stays
        // in one core's caches. Several partitions per thread let a thread that runs out of work take over part of a busy
        // region (the servers around a reducer). Diagonal planes, which spread every region over every partition, made
        // every link cross partitions and took 5-10 % more CPU for the same run.
        _threads = options.Threads;
        int count = options.Threads == 1 ? 1 : Math.Min(n, options.Threads * PartitionsPerThread);
        _partitions = new SimulationPartition[count];
        _framesKeptFree = Math.Max(FramesKeptFreePerServer, FramesKeptFreePerServer * n / count);
        _partitionOf = new SimulationPartition[nodes];
        for (int p = 0; p < count; p++)
        {
            _partitions[p] = new SimulationPartition(this, p);
        }
        for (int i = 0; i < nodes; i++)
        {
            _partitionOf[i] = _partitions[(int)((long)i * count / nodes)];
        }

        if (fabric is not null)
        {
            (_links, _switches) = BuildSwitchedLinks(fabric, lossRoot);
            if ((long)_links.Length + n > EventOrder.MaxEntity)
            {
                throw new ArgumentException($"a network of {_links.Length} link directions is more than the simulator can order events for", nameof(options));
            }
            AttachEnergyModel();
            RunDirectory = RunDirectoryUnder(options);
            return;
        }
        _switches = [];
        _links = new SimulatedLink[n * Ports.Count];
        for (int i = 0; i < n; i++)
        {
            var c = Torus.CoordinateOf(i);
            foreach (var port in Ports.All)
            {
                int index = (i * Ports.Count) + (int)port;
                _links[index] = new SimulatedLink(this, index, c, port, Torus.Neighbour(c, port), options.TransmitRingDepth, options.LossRate,
                    lossRoot.Fork((ulong)index));
            }
        }
        foreach (var link in _links)
        {
            link.Peer = _links[(link.ToIndex * Ports.Count) + (int)link.ToPort];
            link.Sender = _partitionOf[link.FromIndex];
            link.Receiver = _partitionOf[link.ToIndex];
        }
        AttachEnergyModel();
        RunDirectory = RunDirectoryUnder(options);
    }

    public SimulationOptions Options => _options;

    /// <summary>Every host: the servers, then any appliances (<see cref="SimulationOptions.Servers"/>).</summary>
    public Torus Torus { get; }

    /// <summary>The servers: <see cref="Torus"/> unless appliances follow them.</summary>
    public Torus Servers { get; }

    /// <summary>Where a NetAgg network's agg boxes are (null on any other network).</summary>
    public NetAggLayout? AggBoxes { get; }

    /// <summary>Whether some host's work takes virtual time (servers' compute priced, or agg boxes).</summary>
    internal bool PricesCompute => _compute is not null;

    /// <summary>Virtual time in nanoseconds: of the last event processed (or the time a run was asked to reach).</summary>
    public long Now => _now;

    /// <summary>Partitions the servers are split into (several per thread when there is more than one thread).</summary>
    public int Partitions => _partitions.Length;

    /// <summary>Threads that run the partitions (<see cref="SimulationOptions.Threads"/>, at most one per partition).</summary>
    public int Threads => Math.Min(_threads, _partitions.Length);

    /// <summary>The frame pool of the first partition (tests rent frames from it); <see cref="FramesInUse"/> counts all.</summary>
    public FramePool Frames => _partitions[0].Frames;

    /// <summary>Frames rented from every partition's pool and not yet returned.</summary>
    public long FramesInUse => _partitions.Sum(p => p.Frames.InUse) + _spareFrames.InUse;

    /// <summary>Frame buffers allocated so far (in use or free).</summary>
    public long FramesAllocated => _partitions.Sum(p => p.Frames.Created);

    /// <summary>The run's seeded generator, for test traffic and workloads (loss injection has its own streams).</summary>
    public Xoshiro256StarStar Random { get; }

    /// <summary>The event trace, when <see cref="SimulationOptions.TraceEvents"/> is on (the run then uses one thread).</summary>
    public EventTrace? Trace { get; }

    /// <summary>Every directed link, indexed by server index x 6 + port, then (switched networks) every switch port's.</summary>
    public IReadOnlyList<SimulatedLink> Links => _links;

    /// <summary>The switches of a switched network (none on the torus).</summary>
    public IReadOnlyList<SimulatedSwitch> Switches => _switches;

    /// <summary>How the servers are wired.</summary>
    public NetworkTopology Topology { get; }

    /// <summary>Warnings and errors logged by any node (at most <see cref="SimulationOptions.MaxKeptWarnings"/>).</summary>
    public IReadOnlyList<LogEntry> Warnings => _warnings;

    /// <summary>Warnings and errors logged, kept or not.</summary>
    public long WarningCount { get; private set; }

    /// <summary>This run's directory; each node's data directory is a subdirectory named after its coordinate.</summary>
    public string RunDirectory { get; }

    public bool IsStarted => _started;

    /// <summary>Sets the callback that registers a node's services; it runs at every boot (start and restore).</summary>
    public void Configure(Action<NodeHost> configure)
    {
        if (_started)
        {
            throw new InvalidOperationException("configure the nodes before Start");
        }
        _configure = configure;
    }

    /// <summary>Boots every server at the current time (normally 0).</summary>
    public void Start()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (_started)
        {
            throw new InvalidOperationException("the simulation is already started");
        }
        _started = true;
        Directory.CreateDirectory(RunDirectory); // the servers' own directories appear when their services ask for them
        for (int i = 0; i < _hosts.Length; i++)
        {
            Boot(i);
        }
    }

    /// <summary>The server's current host (after a failure, the halted one until it is restored).</summary>
    public NodeHost Host(Coordinate c) => Host(IndexOf(c));

    public NodeHost Host(int index) =>
        _hosts[index] ?? throw new InvalidOperationException("the simulation has not been started");

    public bool IsServerFailed(Coordinate c) => _failed[IndexOf(c)];

    /// <summary>The link leaving <paramref name="from"/> through <paramref name="port"/>.</summary>
    public SimulatedLink Link(Coordinate from, Port port) => _links[(IndexOf(from) * Ports.Count) + (int)port];

    /// <summary>Traffic summed over every directed link.</summary>
    public LinkStats LinkTotals
    {
        get
        {
            var total = default(LinkStats);
            foreach (var link in _links)
            {
                total += link.Stats;
            }
            return total;
        }
    }

    public string DataDirectoryOf(Coordinate c) =>
        Path.Combine(RunDirectory, string.Create(CultureInfo.InvariantCulture, $"{c.X}-{c.Y}-{c.Z}"));

    /// <summary>
    /// Stops every node and returns every frame held by links and queues to the pool; deletes the run directory
    /// when <see cref="SimulationOptions.DeleteDataOnDispose"/> is set.
    /// </summary>
    public void Dispose()
    {
        if (_disposed)
        {
            return;
        }
        _disposed = true;
        _workers?.Dispose();
        foreach (var host in _hosts)
        {
            host?.Stop();
        }
        foreach (var link in _links)
        {
            link.ReleaseAll();
        }
        foreach (var partition in _partitions)
        {
            partition.Clear();
        }
        _actionQueue.Clear();
        _actions.Clear();
        if (_options.DeleteDataOnDispose && Directory.Exists(RunDirectory))
        {
            Directory.Delete(RunDirectory, recursive: true);
        }
    }

    /// <summary>Nanoseconds of work server <paramref name="index"/> was charged (0 when compute is not priced).</summary>
    public long ComputeBusy(int index) => ComputeOf(index)?.BusyTotal ?? 0;

    /// <summary>Nanoseconds server <paramref name="index"/>'s core spent receiving frames (<see cref="ComputeRates.FrameNanoseconds"/>).</summary>
    public long ComputeFrameBusy(int index) => ComputeOf(index)?.FrameBusy ?? 0;

    /// <summary>Nanoseconds of <paramref name="kind"/> work server <paramref name="index"/> was charged.</summary>
    public long ComputeBusy(int index, ComputeWork kind) => ComputeOf(index)?.BusyOf(kind) ?? 0;

    /// <summary>The host's core when its compute is priced, else null.</summary>
    internal ServerCompute? ComputeOf(int index) => _compute is not null && index < _compute.Length ? _compute[index] : null;

    internal SimulatedLink LinkAt(int index) => _links[index];

    internal NodeHost HostAt(int index) => _hosts[index]!;

    /// <summary>Servers; node indices from here on are switches.</summary>
    internal int ServerCount => _hosts.Length;

    internal SimulatedSwitch SwitchAt(int node) => _switches[node - _hosts.Length];

    internal bool IsFailed(int index) => _failed[index];

    internal int BootOf(int index) => _boots[index];

    internal bool IsCurrentHost(int index, NodeHost host) => ReferenceEquals(_hosts[index], host) && !_failed[index];

    /// <summary>Order-key entity of server <paramref name="index"/>'s timers (after every link's).</summary>
    internal int TimerEntity(int index) => _links.Length + index;

    internal void Log(long now, Coordinate node, LogLevel level, string message)
    {
        bool keep = level >= LogLevel.Warning;
        var sink = _options.LogSink;
        bool emit = sink is not null && level >= _options.MinLogLevel;
        if (!keep && !emit)
        {
            return;
        }
        var entry = new LogEntry(now, node, level, message);
        // Partitions may log at once (parallel runs): the lock keeps the count and the list whole.
        lock (_logLock)
        {
            if (keep)
            {
                WarningCount++;
                if (_warnings.Count < _options.MaxKeptWarnings)
                {
                    _warnings.Add(entry);
                }
            }
            if (emit)
            {
                sink!(entry);
            }
        }
    }

    /// <summary>How a run's directory under the data root is named: this prefix, the process id, a dash and more.</summary>
    private const string RunDirectoryPrefix = "run-";

    private static string RunDirectoryUnder(SimulationOptions options)
    {
        string root = options.DataRoot ?? Path.Combine(Path.GetTempPath(), "camdoop-sim");
        LeftoverScratch.RemoveOnce(root, RunDirectoryPrefix);
        return Path.Combine(root, string.Create(CultureInfo.InvariantCulture,
            $"{RunDirectoryPrefix}{Environment.ProcessId}-{Interlocked.Increment(ref s_runs)}-{DateTime.UtcNow.Ticks:x}"));
    }

    private int IndexOf(Coordinate c)
    {
        if (!Torus.Contains(c))
        {
            throw new ArgumentOutOfRangeException(nameof(c), c, $"not a server of the {Torus} torus");
        }
        return Torus.IndexOf(c);
    }

    /// <summary>Creates a fresh host for server <paramref name="index"/>, registers its services and starts it.</summary>
    private void Boot(int index)
    {
        var c = Torus.CoordinateOf(index);
        string directory = DataDirectoryOf(c); // the host creates it when a service first asks for it
        var partition = _partitionOf[index];
        var nodeOptions = _options.Node with { DataDirectory = directory };
        if (_switches.Length > 0)
        {
            // No neighbour answers a beacon across a switch: a NIC's link is up while its cable has carrier.
            nodeOptions = nodeOptions with { BeaconInterval = long.MaxValue / 8, BeaconMisses = 1 };
        }
        if (AggBoxes is not null && index >= Servers.Count && index < Servers.Count + AggBoxes.Boxes)
        {
            // An agg box's service queues hold as long a time of its faster cable as a server's hold of its own: with
            // a server's 16 frames, a box that takes in streams at 10 Gbit/s overflows its queue with acknowledgements.
            long ratio = Math.Max(1, _options.Network!.AggBoxes.LinkRateBitsPerSecond / _options.LinkRateBitsPerSecond);
            nodeOptions = nodeOptions with { QueueCapacity = (int)Math.Min(nodeOptions.QueueCapacity * ratio, 4096) };
        }
        if (_grin is not null)
        {
            // A relaying server queues for its neighbours as deep as a switch port does (a kernel's interface queue).
            nodeOptions = nodeOptions with { TransitQueueCapacity = _options.Network!.PortBufferBytes / FrameLayout.MaxFrameSize };
        }
        var host = new NodeHost(c, Torus, partition, partition.Frames, nodeOptions);
        if (_grin is not null)
        {
            host.Relay = new GrinRelay(_grin, index, Torus);
        }
        foreach (var port in Ports.All)
        {
            host.Attach(port, _links[(index * Ports.Count) + (int)port]);
        }
        _hosts[index] = host;
        _configure?.Invoke(host);
        host.Start();
    }
}
