using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

/// <summary>
/// One CamCube server's runtime: hosts services, owns one bounded queue per service per port, drains each port's
/// queues by deficit round robin (fair sharing between services, the Camdoop paper, §3), validates and dispatches received
/// frames, runs timers and watches neighbour liveness. Single-threaded: every method runs on the node's event loop.
/// </summary>
public sealed partial class NodeHost : INodeContext, ILinkEvents
{
    private readonly INodeDriver _driver;
    private readonly NodeOptions _options;
    private readonly IService?[] _services = new IService?[256];
    private readonly List<IService> _serviceOrder = [];
    private readonly ILinkTransport?[] _links = new ILinkTransport?[Ports.Count];
    private IKeyRouter? _keyRouter;
    private bool _started;
    private bool _halted;
    private bool _dataDirectoryReady;

    public NodeHost(Coordinate self, Torus torus, INodeDriver driver, FramePool frames, NodeOptions? options = null)
    {
        if (!torus.Contains(self))
        {
            throw new ArgumentOutOfRangeException(nameof(self), self, $"not a server of the {torus} torus");
        }
        Self = self;
        Torus = torus;
        _driver = driver;
        Frames = frames;
        _options = options ?? new NodeOptions();
        Monitor = new LinkMonitor(this, _options);
        for (int p = 0; p < Ports.Count; p++)
        {
            _portQueues[p] = [];
        }
        Register(Monitor, queueCapacity: 4);
    }

    public Coordinate Self { get; }

    public Torus Torus { get; }

    public long Now => _driver.NowOf(this);

    public long UnixTimeMilliseconds => _driver.UnixTimeMilliseconds;

    public long ClusterTime => _driver.ClusterTime;

    /// <summary>
    /// The server's directory for local files, created when first asked for: a simulated cube of 512 servers whose
    /// job writes nothing (map outputs in memory, output discarded) spent half a second making and removing them.
    /// </summary>
    public string DataDirectory
    {
        get
        {
            if (!_dataDirectoryReady && _options.DataDirectory.Length > 0)
            {
                Directory.CreateDirectory(_options.DataDirectory);
                _dataDirectoryReady = true;
            }
            return _options.DataDirectory;
        }
    }

    public NodeCounters Counters { get; } = new();

    public FramePool Frames { get; }

    public NodeOptions Options => _options;

    /// <summary>The built-in liveness service.</summary>
    public LinkMonitor Monitor { get; }

    public IReadOnlyList<IService> Services => _serviceOrder;

    /// <summary>Adds a service; its queues get <paramref name="queueCapacity"/> frames per port (default from the options).</summary>
    public void Register(IService service, int queueCapacity = 0)
    {
        if (_started)
        {
            throw new InvalidOperationException("services must be registered before the node starts");
        }
        if (_services[service.Id] is not null)
        {
            throw new InvalidOperationException($"service id {service.Id} is already taken by {_services[service.Id]!.Name}");
        }
        _services[service.Id] = service;
        _serviceOrder.Add(service);
        int capacity = queueCapacity > 0 ? queueCapacity : _options.QueueCapacity;
        for (int p = 0; p < Ports.Count; p++)
        {
            _portQueues[p].Add(new ServiceQueue(service.Id, capacity, Math.Max(capacity, _options.TransitQueueCapacity)));
        }
        _queueSlot[service.Id] = (byte)(_serviceOrder.Count - 1);
    }

    /// <summary>Connects a port to its link. A port without a link is permanently down.</summary>
    public void Attach(Port port, ILinkTransport link) => _links[(int)port] = link;

    /// <summary>Installs the service that sees every key-routed frame first (the key-based routing service).</summary>
    public void SetKeyRouter(IKeyRouter router) => _keyRouter = router;

    public void Start()
    {
        if (_started)
        {
            return;
        }
        _started = true;
        InitialiseLinkStates();
        foreach (var s in _serviceOrder)
        {
            Guard(s, static (svc, host) => svc.Start(host), this);
        }
    }

    /// <summary>Stops every service and drops queued frames. After this the node ignores all events.</summary>
    public void Stop()
    {
        if (_halted)
        {
            return;
        }
        _halted = true;
        for (int i = _serviceOrder.Count - 1; i >= 0; i--)
        {
            Guard(_serviceOrder[i], static (svc, _) => svc.Stop(), this);
        }
        for (int p = 0; p < Ports.Count; p++)
        {
            foreach (var q in _portQueues[p])
            {
                q.Flush();
            }
        }
        FlushLoopback();
    }

    public bool IsHalted => _halted;

    public T? GetService<T>()
        where T : class, IService
    {
        foreach (var s in _serviceOrder)
        {
            if (s is T t)
            {
                return t;
            }
        }
        return null;
    }

    public IService? GetService(byte id) => _services[id];

    public void Log(LogLevel level, string message) => _driver.Log(Self, level, message);

    public void RunOffLoop(Action work, Action then)
    {
        ArgumentNullException.ThrowIfNull(work);
        ArgumentNullException.ThrowIfNull(then);
        _driver.RunOffLoop(this, work, then);
    }

    public void Compute(ComputeWork kind, long bytes)
    {
        if (bytes > 0)
        {
            _driver.Compute(this, kind, bytes);
        }
    }

    /// <summary>Runs a service callback; with fault isolation on, an exception is logged and counted instead of escaping.</summary>
    private void Guard<TState>(IService service, Action<IService, TState> action, TState state)
    {
        if (!_options.IsolateServiceFaults)
        {
            action(service, state);
            return;
        }
        try
        {
            action(service, state);
        }
        // a service's bug must not take the server down
        catch (Exception ex)
        {
            Counters.ServiceFaults++;
            Log(LogLevel.Error, $"service {service.Name} failed: {ex}");
        }
    }
}
