using System.Globalization;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Engine;

namespace Camdoop.Simulator.Network;

/// <summary>
/// A packet-level simulated CamCube: one <see cref="NodeHost"/> per server running the very same services as a
/// real server, full-duplex simulated links between torus neighbours, and one global event queue in virtual
/// time (nanoseconds). Single-threaded and deterministic: the same options, seed and inputs give the same run.
/// <para>
/// Usage: construct, <see cref="Configure"/> the services every node boots with, <see cref="Start"/>, then drive
/// it with <see cref="RunUntil(long)"/> / <see cref="RunUntil(Func{bool}, long, int)"/> / <see cref="Step"/>;
/// inject failures with <see cref="FailServer"/>, <see cref="FailLink"/> and their restores.
/// </para>
/// </summary>
public sealed partial class Simulation : INodeDriver, IDisposable
{
    private static long s_runs;

    private readonly SimulationOptions _options;
    private readonly NodeHost?[] _hosts;
    private readonly int[] _boots;
    private readonly bool[] _failed;
    private readonly SimulatedLink[] _links;
    private readonly List<LogEntry> _warnings = [];
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
        _hosts = new NodeHost?[n];
        _boots = new int[n];
        _failed = new bool[n];
        Random = new Xoshiro256StarStar(options.Seed);
        _lossRandom = Random.Fork(ulong.MaxValue);
        Trace = options.TraceEvents ? new EventTrace(options.TraceLines) : null;
        _arrivalDelay = options.PropagationDelay + options.ForwardingLatency;
        _nsPerByte = 8_000_000_000L % options.LinkRateBitsPerSecond == 0 ? 8_000_000_000L / options.LinkRateBitsPerSecond : 0;
        _links = new SimulatedLink[n * Ports.Count];
        for (int i = 0; i < n; i++)
        {
            var c = Torus.CoordinateOf(i);
            foreach (var port in Ports.All)
            {
                int index = (i * Ports.Count) + (int)port;
                _links[index] = new SimulatedLink(this, index, c, port, Torus.Neighbour(c, port), options.TransmitRingDepth, options.LossRate);
            }
        }
        foreach (var link in _links)
        {
            link.Peer = _links[(link.ToIndex * Ports.Count) + (int)link.ToPort];
        }
        string root = options.DataRoot ?? Path.Combine(Path.GetTempPath(), "camdoop-sim");
        RunDirectory = Path.Combine(root, string.Create(CultureInfo.InvariantCulture,
            $"run-{Environment.ProcessId}-{Interlocked.Increment(ref s_runs)}-{DateTime.UtcNow.Ticks:x}"));
    }

    public SimulationOptions Options => _options;

    public Torus Torus { get; }

    /// <summary>Virtual time in nanoseconds.</summary>
    public long Now => _now;

    /// <summary>The frame pool every node shares.</summary>
    public FramePool Frames { get; } = new(4096, threadSafe: false);

    /// <summary>The run's seeded generator, for test traffic and workloads (loss injection has its own stream).</summary>
    public Xoshiro256StarStar Random { get; }

    /// <summary>The event trace, when <see cref="SimulationOptions.TraceEvents"/> is on.</summary>
    public EventTrace? Trace { get; }

    /// <summary>Every directed link, indexed by server index x 6 + port.</summary>
    public IReadOnlyList<SimulatedLink> Links => _links;

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
        foreach (var host in _hosts)
        {
            host?.Stop();
        }
        foreach (var link in _links)
        {
            link.ReleaseAll();
        }
        _queue.Clear();
        _actions.Clear();
        if (_options.DeleteDataOnDispose && Directory.Exists(RunDirectory))
        {
            Directory.Delete(RunDirectory, recursive: true);
        }
    }

    long INodeDriver.Now => _now;

    void INodeDriver.ScheduleTimer(NodeHost host, long dueTime, long timerId)
    {
        int index = Torus.IndexOf(host.Self);
        if (!ReferenceEquals(_hosts[index], host) || _failed[index])
        {
            return; // a dead incarnation's timer must never reach its successor
        }
        _queue.Push(Math.Max(dueTime, _now), SimEvent.ForTimer(index, _boots[index], timerId));
    }

    void INodeDriver.Log(Coordinate node, LogLevel level, string message)
    {
        bool keep = level >= LogLevel.Warning;
        var sink = _options.LogSink;
        bool emit = sink is not null && level >= _options.MinLogLevel;
        if (!keep && !emit)
        {
            return;
        }
        var entry = new LogEntry(_now, node, level, message);
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
        string directory = DataDirectoryOf(c);
        Directory.CreateDirectory(directory);
        var host = new NodeHost(c, Torus, this, Frames, _options.Node with { DataDirectory = directory });
        foreach (var port in Ports.All)
        {
            host.Attach(port, _links[(index * Ports.Count) + (int)port]);
        }
        _hosts[index] = host;
        _configure?.Invoke(host);
        host.Start();
    }
}
