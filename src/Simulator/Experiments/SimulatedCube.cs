using Camdoop.Experiments.NetAgg;
using Camdoop.JobControl;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.DirectShuffle.Plans;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Server;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>
/// A simulated cube whose every server runs the services of a real one (<see cref="ServerStack"/>): on the torus,
/// key routing, the chunk store, the Camdoop shuffle, job control and monitoring; on a switched network, TCP, the stream
/// shuffle and job control. Inputs are placed on the servers' disks as datasets, and jobs are submitted to the job
/// control of the server that coordinates them, exactly as a client's front-end does on a cube: maps, the shuffle's
/// synchronous start, progress, reroots and the end travel as control messages over the simulated network. The
/// experiments only place inputs, submit, inject failures and read results.
/// </summary>
internal sealed class SimulatedCube : IDisposable
{
    private readonly JobSimulationOptions _options;
    private readonly ServerStack?[] _stacks;
    private readonly SwitchedControlNetwork?[] _switched;
    private readonly Dictionary<Key, SharedMapTasks> _mapTasks = [];
    private readonly List<ReduceTaskResult> _completions = [];
    private readonly List<string> _shuffleErrors = [];
    private readonly FailureWatch? _watch;
    private readonly Dictionary<(int Host, ulong Job), ServerJob> _serverJobs = [];
    private readonly Dictionary<(int Host, ulong Job), DirectJob> _directJobs = [];
    private readonly long _synchronousStart;
    private readonly HashSet<ulong> _direct = [];
    private readonly Dictionary<ulong, ServerSet> _spans = [];
    private readonly Dictionary<ulong, (ServerSet Members, IAggregationPlan Plan)> _spanPlans = [];

    public SimulatedCube(JobSimulationOptions options, IReadOnlyList<JobSimulationInput> inputs, bool watchFailures = false)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(inputs);
        _options = options;
        var torus = options.Torus;
        var network = options.Network;
        // NetAgg's boxes are hosts after the servers, in extra x-planes of the hosts' torus.
        Boxes = network?.Topology.AggBoxes(network, torus.Count);
        var hosts = Boxes?.HostTorus(torus) ?? torus;
        foreach (var input in inputs)
        {
            for (int s = 0; s < torus.Count; s++)
            {
                if (input.ChunkOf(s) is { } chunk && !_mapTasks.TryAdd(chunk, input.MapTasks))
                {
                    throw new ArgumentException($"two inputs hold chunk {chunk}: inputs of jobs that run at once need distinct dataset names", nameof(inputs));
                }
            }
        }
        _watch = watchFailures ? new FailureWatch() : null;
        var simOptions = JobSimulation.SimulationOptionsFor(options);
        if (network is not null)
        {
            simOptions = simOptions with { Network = network, Torus = hosts, Servers = torus };
        }
        _synchronousStart = SynchronousStartFor(simOptions, hosts.Count);
        _stacks = new ServerStack?[hosts.Count];
        _switched = new SwitchedControlNetwork?[hosts.Count];
        Sim = new Simulation(simOptions, Install);
        options.Configure?.Invoke(Sim);
        foreach (var input in inputs)
        {
            input.PlaceInto(Sim);
        }
        Sim.Start();
    }

    public Simulation Sim { get; }

    /// <summary>NetAgg's agg boxes, on a netagg network.</summary>
    public NetAggLayout? Boxes { get; }

    /// <summary>Every reduce task completion any server reported (all attempts, duplicates included), in the order they came.</summary>
    public IReadOnlyList<ReduceTaskResult> Completions
    {
        get
        {
            lock (_completions)
            {
                return [.. _completions];
            }
        }
    }

    /// <summary>Each host's services (null for hosts past the job's appliances).</summary>
    public ServerStack? Stack(int host) => _stacks[host];

    /// <summary>The Camdoop service of every server (torus only).</summary>
    public IReadOnlyList<CamdoopService> CamdoopServices => [.. _stacks.Take(_options.Torus.Count).Select(s => s!.Camdoop!)];

    /// <summary>Errors the servers' shuffles reported (a corrupt stream, a job function threw).</summary>
    public IReadOnlyList<string> ShuffleErrors
    {
        get
        {
            lock (_shuffleErrors)
            {
                return [.. _shuffleErrors];
            }
        }
    }

    /// <summary>
    /// Host <paramref name="host"/>'s part of job <paramref name="shuffleId"/> on the torus, kept when it started: the
    /// servers drop their part when the job ends, and the reports read what it did after that.
    /// </summary>
    public ServerJob? ServerJobOf(int host, ulong shuffleId)
    {
        lock (_serverJobs)
        {
            return _serverJobs.GetValueOrDefault((host, shuffleId));
        }
    }

    /// <summary>Host <paramref name="host"/>'s part of a stream shuffle's job, kept when it started.</summary>
    public DirectJob? DirectJobOf(int host, ulong shuffleId)
    {
        lock (_directJobs)
        {
            return _directJobs.GetValueOrDefault((host, shuffleId));
        }
    }

    /// <summary>
    /// Submits <paramref name="description"/> over <paramref name="input"/> at virtual time <paramref name="at"/> to the
    /// server that owns its control key among the servers up then (a front-end there would take it). With
    /// <paramref name="limits"/>, every server first sets them, as `camdoop limit` does. A TCP Camdoop job not
    /// <paramref name="aggregated"/> sends every map output straight to its reducer, past the network's aggregation
    /// (<see cref="JobSimulationOptions.Aggregated"/>).
    /// </summary>
    public SubmittedJob Submit(JobDescription description, JobSimulationInput input, long at, IReadOnlyList<Monitoring.Control.RateLimit>? limits = null,
        bool aggregated = true)
    {
        ArgumentNullException.ThrowIfNull(description);
        ArgumentNullException.ThrowIfNull(input);
        // Before the simulation asks for the job's plan.
        if (!aggregated)
        {
            _direct.Add(description.JobId);
        }
        if (_options.Network is not null)
        {
            // A job on some of the servers aggregates over those that hold its input and its roots: a binary tree or
            // a chain of its own servers, as the NetAgg paper's baselines build them, not of every server there is.
            int n = _options.Torus.Count;
            var span = new ServerSet(n);
            for (int s = 0; s < n; s++)
            {
                if (input.ChunkOf(s) is not null)
                {
                    span.Add(s);
                }
            }
            foreach (int root in JobPlacement.For(_options.Torus, description).RootIndices)
            {
                span.Add(root);
            }
            if (span.Count < n)
            {
                _spans[description.JobId] = span;
            }
        }
        var job = new SubmittedJob(this, description.JobId) { SubmittedAtScheduled = at };
        Sim.Schedule(at, () =>
        {
            if (limits is { Count: > 0 })
            {
                Sim.ForEachServer(s =>
                {
                    if (s < _options.Torus.Count && !Sim.IsServerFailed(Sim.Torus.CoordinateOf(s)))
                    {
                        JobSimulation.ApplyLimits(Sim.Host(s), _stacks[s]?.Camdoop, limits);
                    }
                });
            }
            var coordinator = CoordinatorOf(description.JobId);
            job.SubmittedAt = Sim.Now;
            job.FirstCoordinator = coordinator;
            job.First = _stacks[Sim.Torus.IndexOf(coordinator)]!.JobControl.Submit(description, input.Manifest);
        });
        return job;
    }

    /// <summary>The server that coordinates <paramref name="jobId"/>: the owner of its control key among the servers up now.</summary>
    public Coordinate CoordinatorOf(ulong jobId)
    {
        var servers = _options.Torus;
        var up = new ServerSet(servers.Count);
        for (int s = 0; s < servers.Count; s++)
        {
            if (!Sim.IsServerFailed(servers.CoordinateOf(s)))
            {
                up.Add(s);
            }
        }
        return servers.CoordinateOf(KeyMapper.Shared(servers).OwnerIndex(JobKeys.ControlKey(jobId), up));
    }

    /// <summary>
    /// Crashes <paramref name="server"/> at <paramref name="at"/>. On a switched network the other hosts learn of it one
    /// liveness detection later (a beacon interval times the misses): returns when; on the torus they learn through
    /// their links' beacons (null).
    /// </summary>
    public long? Fail(Coordinate server, long at)
    {
        Sim.FailServer(server, at);
        if (_options.Network is null)
        {
            return null;
        }
        var node = Sim.Options.Node;
        long detected = at + (node.BeaconInterval * node.BeaconMisses);
        Sim.Schedule(detected, () => Sim.ForEachServer(h =>
        {
            if (_switched[h] is { } network && !Sim.IsServerFailed(Sim.Torus.CoordinateOf(h)))
            {
                network.OnHostsLost([server]);
            }
        }));
        return detected;
    }

    /// <summary>What the servers' routing saw of the injected failures (torus only, with <c>watchFailures</c>).</summary>
    public IReadOnlyList<FailureReport> FailureReports(IReadOnlyList<InjectedFailure> failures, IReadOnlyDictionary<InjectedFailure, long> injected, long t0) =>
        _watch?.Report(failures, injected, _options.Torus, t0) ?? [];

    public void Dispose() => Sim.Dispose();

    // A receiver's admission bound follows the switch queue in front of its NICs and TCP's initial window, which the
    // simulation knows exactly (a real server is told them).
    internal static DirectShuffleOptions AssumingNetwork(DirectShuffleOptions direct, SwitchedNetworkOptions network, TcpOptions tcp) => direct with
    {
        AssumedBufferBytes = (long)network.PortBufferBytes * network.NicsPerServer,
        InitialWindowBytes = tcp.InitialWindowSegments * tcp.SegmentSize,
    };

    private void Install(NodeHost host)
    {
        int index = Sim.Torus.IndexOf(host.Self);
        var options = _options;
        var stackOptions = new ServerStackOptions
        {
            Camdoop = options.ServiceOptionsForRun(),
            JobControl = new JobControlOptions { Jobs = JobCatalog.AnyPath, SynchronousStart = _synchronousStart },
            MapTasks = new ChunkRouter(_mapTasks),
            Direct = options.Network is { } switched ? AssumingNetwork(options.Direct ?? new DirectShuffleOptions(), switched, options.Tcp) : options.Direct,
            Servers = options.Network is null ? null : options.Torus,
            Appliances = Boxes is null ? [] : [.. Enumerable.Range(options.Torus.Count, Boxes.Boxes)],
            Plans = options.Network is null ? null : Plans,
        };
        ServerStack stack;
        if (options.Network is null)
        {
            stack = ServerStack.OnTorus(host, stackOptions);
            _watch?.Attach(stack.Routing!, host);
            stack.Camdoop!.ReduceTaskCompleted += OnCompleted;
            stack.Camdoop.JobStarted += j => Keep(_serverJobs, index, j.JobId, j);
            stack.Camdoop.JobFailed += j => OnShuffleFailed(host, j.Failure);
        }
        else
        {
            var network = new SwitchedControlNetwork(host);
            _switched[index] = network;
            var tcp = TcpStreamTransport.Install(host, options.Tcp, options.TcpSendBufferBytes);
            stack = ServerStack.OnSwitches(host, network, tcp, stackOptions);
            stack.Direct!.ReduceTaskCompleted += OnCompleted;
            stack.Direct.JobStarted += j => Keep(_directJobs, index, j.JobId, j);
            stack.Direct.JobFailed += j => OnShuffleFailed(host, j.Failure);
        }
        _stacks[index] = stack;
    }

    /// <summary>
    /// How long after the coordinator decides every server starts the shuffle: the coordinator's word must reach the
    /// farthest server first, across the network's diameter (<see cref="NetworkTopology.DiameterBound"/>), each hop a
    /// short frame's serialisation, its propagation and forwarding (and a link's wake-up from low-power idle, with EEE),
    /// after the coordinator has sent it to every server in turn; two hops to spare. The simulated cube's servers share
    /// virtual time, so they start at the same nanosecond, as they did when the experiments started them directly.
    /// </summary>
    private static long SynchronousStartFor(SimulationOptions options, int hosts)
    {
        int diameter = options.Topology.DiameterBound(options.Torus);
        const int frameBytes = FrameLayout.HeaderSize + 15 + 8 + 24; // a start: headers, control header, instant; preamble, FCS and gap
        long serialise = (long)Math.Ceiling(frameBytes * 8e9 / options.LinkRateBitsPerSecond);
        long hop = options.PropagationDelay + options.ForwardingLatency + serialise + (options.Energy is null ? 0 : 20 * SimTime.Microsecond);
        return ((diameter + 2) * hop) + (hosts * serialise);
    }

    /// <summary>
    /// A TCP Camdoop job's trees: NetAgg's boxes, or the servers' own aggregation, over the servers left in it (of those
    /// holding its input and its roots).
    /// </summary>
    private IAggregationPlan? Plans(JobDescription description, ServerSet members)
    {
        var servers = _options.Torus;
        var roots = JobPlacement.For(servers, description).RootIndices;
        IAggregationPlan plan = _direct.Contains(description.JobId) ? new DirectPlan(servers.Count, roots)
            : Boxes is not null ? new NetAggPlan(Boxes, roots, _options.AggregationTrees)
            : _options.Aggregation.Plan(servers.Count, _options.Network!.Topology.RackSize(_options.Network, servers.Count), roots, _options.AggregationTrees);
        if (_spans.TryGetValue(description.JobId, out var span))
        {
            var inJob = new ServerSet(members.Capacity);
            for (int s = 0; s < servers.Count; s++)
            {
                if (members.Contains(s) && span.Contains(s))
                {
                    inJob.Add(s);
                }
            }
            // One plan for every server of the job (a plan per server made 512 of them walk a chain of 512 servers
            // each), its children filled before it is shared, so that the servers only read it.
            lock (_spanPlans)
            {
                if (_spanPlans.TryGetValue(description.JobId, out var cached) && cached.Members.Equals(inJob))
                {
                    return cached.Plan;
                }
                var spanned = PlanWithout.Over(plan, servers.Count + (Boxes?.Boxes ?? 0), servers.Count, roots, inJob);
                for (int r = 0; r < roots.Count; r++)
                {
                    for (int t = 0; t < spanned.Trees; t++)
                    {
                        spanned.ChildrenOf(r, t, roots[r]);
                    }
                }
                _spanPlans[description.JobId] = (inJob, spanned);
                return spanned;
            }
        }
        return PlanWithout.Over(plan, servers.Count + (Boxes?.Boxes ?? 0), servers.Count, roots, members);
    }

    private static void Keep<T>(Dictionary<(int Host, ulong Job), T> jobs, int host, ulong jobId, T job)
    {
        lock (jobs)
        {
            jobs[(host, jobId)] = job;
        }
    }

    private void OnCompleted(ReduceTaskResult result)
    {
        lock (_completions)
        {
            _completions.Add(result);
        }
    }

    private void OnShuffleFailed(NodeHost host, string? failure)
    {
        lock (_shuffleErrors)
        {
            _shuffleErrors.Add($"{host.Self}: {failure}");
        }
    }

    /// <summary>Sends each chunk's map task to the shared map tasks of the input it belongs to.</summary>
    private sealed class ChunkRouter(Dictionary<Key, SharedMapTasks> byChunk) : IMapTaskRunner
    {
        public MapOutput Run(IMapReduceJob job, JobDescription description, Key chunk, string chunkPath, string dataDirectory) =>
            Of(chunk).Run(job, description, chunk, chunkPath, dataDirectory);

        public MapOutput Run(IMapReduceJob job, JobDescription description, Key chunk, ReadOnlyMemory<byte> bytes, string dataDirectory) =>
            Of(chunk).Run(job, description, chunk, bytes, dataDirectory);

        private SharedMapTasks Of(Key chunk) =>
            byChunk.TryGetValue(chunk, out var tasks) ? tasks : throw new InvalidOperationException($"chunk {chunk} is no simulated input's");
    }
}

/// <summary>
/// A job submitted to a simulated cube: its tracker at the server that coordinates it now (another after its first
/// coordinator died), and the exact virtual time its shuffle started.
/// </summary>
internal sealed class SubmittedJob(SimulatedCube cube, ulong jobId)
{
    private JobTracker? _current;

    public ulong JobId { get; } = jobId;

    public long SubmittedAt { get; set; } = -1;

    /// <summary>When the job is to be submitted (known before it is).</summary>
    public long SubmittedAtScheduled { get; init; }

    /// <summary>The tracker at the first coordinator (the server the job was submitted to).</summary>
    public JobTracker? First { get; set; }

    /// <summary>The server the job was submitted to.</summary>
    public Coordinate FirstCoordinator { get; set; }

    /// <summary>The tracker at the job's coordinator now: the first one's, or a live server's that took the job over.</summary>
    public JobTracker? Current
    {
        get
        {
            if (_current is not null && !cube.Sim.IsServerFailed(CoordinatorOf(_current)))
            {
                return _current;
            }
            if (First is not null && !cube.Sim.IsServerFailed(CoordinatorOf(First)))
            {
                return _current = First;
            }
            // The first coordinator died: find who took over (rare: scanning the cube is fine).
            for (int h = 0; h < cube.Sim.Servers.Count; h++)
            {
                var c = cube.Sim.Torus.CoordinateOf(h);
                if (!cube.Sim.IsServerFailed(c) && cube.Stack(h)?.JobControl.GetJob(JobId) is { } taken)
                {
                    _trackerHosts[taken] = c;
                    return _current = taken;
                }
            }
            return _current ?? First;
        }
    }

    /// <summary>Whether the job is over or every reduce task is done (the coordinator is telling the servers).</summary>
    public bool Finished => Current is { } t && (t.Finishing || t.IsOver);

    /// <summary>The virtual time the shuffle started: exact at the coordinator that started it.</summary>
    public long ShuffleStartedAt => First is { ShuffleStartedAt: > 0 } first ? first.ShuffleStartedAt : Current?.ShuffleStartedAt ?? 0;

    private readonly Dictionary<JobTracker, Coordinate> _trackerHosts = [];

    private Coordinate CoordinatorOf(JobTracker tracker)
    {
        if (_trackerHosts.TryGetValue(tracker, out var c))
        {
            return c;
        }
        return FirstCoordinator; // only the first tracker is not found by scanning
    }
}
