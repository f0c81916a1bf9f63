using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Node;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// One job of a stream shuffle on one host (TCP Camdoop, the Camdoop paper's switched baseline, and the aggregation
/// trees of <see cref="IAggregationPlan"/>): per reduce task rooted elsewhere and per tree, a
/// <see cref="DirectSender"/> where this host is a leaf (a few at a time) or a <see cref="ForwardingVertex"/> where
/// it has children; a <see cref="DirectReducer"/> per reduce task rooted here. Reduce tasks are placed as the Camdoop
/// modes place them, so runs are comparable. Unless the options push, every receiving end admits its children a few
/// at a time (<see cref="Admission"/>) and a stream sends only once admitted; streams resent after a failure push.
/// </summary>
public sealed class DirectJob
{
    private readonly DirectShuffleService _service;
    // Streams ready to send, in the order they were made (each server's rotation; resent ones last), however their
    // admissions came: a server and its reducers then agree on who goes first, as pushing.
    private readonly PriorityQueue<DirectSender, int> _waiting = new();
    private readonly List<DirectSender> _senders = [];
    private readonly List<ForwardingVertex> _vertices = [];
    private readonly Dictionary<(int ReduceTask, int Tree), ForwardingVertex> _vertexOf = [];
    private readonly Dictionary<(int ReduceTask, int Tree), DirectSender> _senderOf = [];
    private readonly List<Admission> _admissions = [];
    private readonly Dictionary<int, DirectReducer> _reducers = [];
    private readonly List<ReduceTaskResult> _completed = [];
    private readonly IReadOnlyList<MapOutput> _mapOutputs;
    private readonly IReadOnlyList<int> _roots;
    private int _active;

    // Reducer programs of a streaming job running for reduce tasks rooted here.
    private int _reducerPrograms;

    internal DirectJob(DirectShuffleService service, JobDescription description, IMapReduceJob job, IReadOnlyList<MapOutput> mapOutputs, IAggregationPlan? plan)
    {
        _service = service;
        Description = description;
        Job = job;
        var context = service.Context;
        var hosts = context.Torus;
        int servers = service.Servers.Count;
        int self = hosts.IndexOf(context.Self);
        bool isServer = self < servers;
        var roots = JobPlacement.For(service.Servers, description).RootIndices;
        _roots = roots;
        _mapOutputs = mapOutputs;
        Plan = plan ?? new DirectPlan(servers, roots);
        int trees = Plan.Trees;
        Options = OptionsFor(service.Options, description);
        var options = Options;
        // Each server starts with the reduce task rooted next after it, so the servers' first streams spread over the reducers.
        var order = Enumerable.Range(0, description.ReduceTasks).OrderBy(r => (roots[r] - self + hosts.Count) % hosts.Count).ThenBy(r => r);
        foreach (int r in order)
        {
            if (roots[r] == self)
            {
                int streams = 0;
                for (int t = 0; t < trees; t++)
                {
                    streams += Plan.ChildrenOf(r, t, self);
                }
                var local = new LocalRunMerge(job, LocalRuns(mapOutputs, r, 0, 1), options.LocalBlockBytes);
                string? path = job is StreamingJob ? StreamingReduce.InputPath(context.DataDirectory, description.JobId, r)
                    : description.Output.Kind == OutputKind.LocalFiles ? ServerJob.OutputPath(context.DataDirectory, description, r) : null;
                var reducer = new DirectReducer(this, r, streams, local, new ReduceOutput(job, path), options.ReducerInputBytes, options.LocalBlockBytes);
                _reducers.Add(r, reducer);
                if (!options.Push)
                {
                    var children = new List<(int, int)>();
                    for (int t = 0; t < trees; t++)
                    {
                        children.AddRange(ChildrenHere(r, t, self));
                    }
                    // Children that are all leaves send streams like this server's own: a guess of their length.
                    long guess = children.All(c => Plan.ChildrenOf(r, c.Item2, c.Item1) == 0) ? local.RunBytes / trees : 0;
                    Admit(reducer, r, children.OrderBy(c => Distance(self, c.Item1)).ThenBy(c => c.Item2), streams, guess);
                }
                continue;
            }
            for (int t = 0; t < trees; t++)
            {
                int children = Plan.ChildrenOf(r, t, self);
                if (!isServer && children == 0)
                {
                    continue; // an appliance outside this tree
                }
                int parent = Plan.ParentOf(r, t, self);
                var parentAt = hosts.CoordinateOf(parent < 0 ? roots[r] : parent);
                var local = isServer ? new LocalRunMerge(job, LocalRuns(mapOutputs, r, t, trees), options.LocalBlockBytes) : null;
                if (children == 0)
                {
                    var sender = new DirectSender(this, r, t, parentAt, local!) { Order = _senders.Count };
                    _senders.Add(sender);
                    _senderOf.Add((r, t), sender);
                }
                else
                {
                    var vertex = new ForwardingVertex(this, r, t, parentAt, children, local, options.ReducerInputBytes, options.LocalBlockBytes);
                    _vertices.Add(vertex);
                    _vertexOf.Add((r, t), vertex);
                    if (!options.Push)
                    {
                        Admit(vertex, r, ChildrenHere(r, t, self).OrderBy(c => Distance(self, c.Sender)), children);
                    }
                }
            }
        }
    }

    /// <summary>Where this job's streams go (the direct plan unless the job was started with another).</summary>
    public IAggregationPlan Plan { get; private set; }

    /// <summary>Streams this host sent again from the start, to a new parent or to a restarted one, after a failure.</summary>
    public int RestartedStreams { get; private set; }

    /// <summary>Record bytes of the streams sent again after a failure.</summary>
    public long ResentBytes => _senders.Where(s => s.IsRestart).Sum(s => s.BytesWritten) + _vertices.Where(v => v.IsRestart).Sum(v => v.BytesWritten);

    /// <summary>Records this host's merges dropped from resent streams as already merged from a failed child.</summary>
    public long DroppedRecords => _vertices.Sum(v => v.DroppedRecords) + _reducers.Values.Sum(r => r.DroppedRecords);

    public JobDescription Description { get; }

    /// <summary>The service's options with the job's own admission settings, the same on every server.</summary>
    public DirectShuffleOptions Options { get; }

    private static DirectShuffleOptions OptionsFor(DirectShuffleOptions service, JobDescription job) =>
        job.Push ? service with { Push = true, ParallelFetches = 0 }
        : job.ParallelFetches > 0 ? service with { Push = false, ParallelFetches = job.ParallelFetches }
        : service;

    public ulong JobId => Description.JobId;

    public IMapReduceJob Job { get; }

    /// <summary>Set when the job failed on this server (corrupt data, a job function threw); the reason.</summary>
    public string? Failure { get; private set; }

    public IReadOnlyList<ReduceTaskResult> CompletedReduceTasks => _completed;

    /// <summary>Record bytes this host's streams carried, leaves' and interior vertices' (preambles not counted).</summary>
    public long BytesSent => _senders.Sum(s => s.BytesWritten) + ForwardedBytes;

    /// <summary>Bytes this host's interior vertices took in: their children's streams and their own local runs.</summary>
    public long MergedBytes => _vertices.Sum(v => v.InputBytes);

    /// <summary>Bytes this host's interior vertices sent on to their parents (fewer than merged where they combined).</summary>
    public long ForwardedBytes => _vertices.Sum(v => v.BytesWritten);

    /// <summary>Bytes this server's reducers took in, from the streams and from local runs.</summary>
    public long ReducedBytes => _reducers.Values.Sum(r => r.InputBytes);

    /// <summary>Streams this host sends: its leaves' and its interior vertices'.</summary>
    public int Streams => _senders.Count + _vertices.Count;

    /// <summary>Of <see cref="Streams"/>, those delivered (or given up with a failed node).</summary>
    public int StreamsDone => _senders.Count(s => s.IsAbandoned || s.IsDelivered) + _vertices.Count(v => v.Abandoned || v.IsDelivered);

    /// <summary>
    /// The job's coordinator said it completed as this part was dropped: every reduce task is stored, though this
    /// server may not have seen its streams' last acknowledgements.
    /// </summary>
    public bool CompletedEverywhere { get; internal set; }

    /// <summary>Every stream delivered and every reduce task rooted here written.</summary>
    public bool IsFinished => StreamsDone == Streams && _reducers.Values.All(r => r.IsFinished) && _reducerPrograms == 0;

    internal long Now => _service.Context.Now;

    internal void Start()
    {
        // Pushing, every stream goes at once (a few at a time per sender); admitted, each waits for its parent's word.
        if (Options.Push)
        {
            foreach (var sender in _senders)
            {
                _waiting.Enqueue(sender, sender.Order);
            }
            // Interior vertices open their streams at once, outside the limit: one waiting for a slot behind streams
            // that wait for it could deadlock.
            foreach (var vertex in _vertices)
            {
                Run(() => vertex.Start(_service.Transport));
            }
        }
        StartWaiting();
        foreach (var reducer in _reducers.Values)
        {
            Run(reducer.Pump);
        }
        // A vertex admits its children whether or not its parent has admitted it: what they send waits in its merger,
        // and no receiver waits on another's admission, so none can wait for ever.
        foreach (var admission in _admissions)
        {
            Run(admission.Start);
        }
    }

    /// <summary>
    /// This host's stream of (<paramref name="reduceTask"/>, <paramref name="tree"/>) was admitted by its parent: a
    /// leaf's stream queues for one of the sender's slots, an interior vertex's opens (outside them, as pushing).
    /// </summary>
    internal void OnAdmitted(int reduceTask, int tree)
    {
        if (_vertexOf.TryGetValue((reduceTask, tree), out var vertex))
        {
            if (!vertex.IsStarted && !vertex.Abandoned && !vertex.IsRestart)
            {
                vertex.Start(_service.Transport);
            }
            return;
        }
        if (_senderOf.TryGetValue((reduceTask, tree), out var sender) && !sender.IsAbandoned && !sender.IsRestart && !sender.IsAdmitted)
        {
            sender.IsAdmitted = true;
            _waiting.Enqueue(sender, sender.Order);
            StartWaiting();
        }
    }

    // The nodes whose stream of (reduceTask, tree) comes here: servers other than the root, and appliances with
    // children in the tree, whose parent is this host.
    private IEnumerable<(int Sender, int Tree)> ChildrenHere(int reduceTask, int tree, int self)
    {
        int servers = _service.Servers.Count;
        int hosts = Math.Min(Plan.Nodes ?? int.MaxValue, _service.Context.Torus.Count);
        int root = _roots[reduceTask];
        for (int node = 0; node < hosts; node++)
        {
            if (node == root || node == self || Plan.IsLost(node) || (node >= servers && Plan.ChildrenOf(reduceTask, tree, node) == 0))
            {
                continue;
            }
            int parent = Plan.ParentOf(reduceTask, tree, node);
            if ((parent < 0 ? root : parent) == self)
            {
                yield return (node, tree);
            }
        }
    }

    // A receiver admits first the node just before it, which starts with the reduce task rooted just after it (the
    // senders' rotation): both ends rank a pair alike, and the first admissions spread over the senders.
    private int Distance(int self, int node) => (self - node + _service.Context.Torus.Count) % _service.Context.Torus.Count;

    private void Admit(StreamMergeNode receiver, int reduceTask, IEnumerable<(int Sender, int Tree)> children, int expected, long guess = 0)
    {
        var list = children.ToList();
        if (list.Count < expected)
        {
            throw new InvalidOperationException($"reduce task {reduceTask} on {_service.Context.Self}: the plan names {list.Count} children, not the {expected} it counts");
        }
        // More nodes than streams: some are gone in a way the plan does not say; admitting them all at once (as
        // pushing) is safe, where a slot held for a node that never sends could stall the rest.
        int bound = list.Count == expected ? Options.AdmissionBound : int.MaxValue;
        var hosts = _service.Context.Torus;
        var transport = _service.Transport;
        var admission = new Admission(list, bound,
            (sender, tree) => new AdmissionWriter(JobId, reduceTask, tree).Send(transport, hosts.CoordinateOf(sender)),
            Options.ParallelFetches == 0 && bound != int.MaxValue ? Options.AssumedBufferBytes : 0, Options.InitialWindowBytes, guess);
        receiver.Admission = admission;
        _admissions.Add(admission);
    }

    /// <summary>Where a child's stream of (reduce task, tree) goes on this host: the reducer, or the tree's vertex here.</summary>
    internal StreamMergeNode? MergeFor(int reduceTask, int tree) =>
        _reducers.TryGetValue(reduceTask, out var reducer) ? reducer : _vertexOf.GetValueOrDefault((reduceTask, tree));

    internal void OnSenderDelivered(DirectSender sender)
    {
        _active--;
        StartWaiting();
    }

    internal void OnReducerCompleted(DirectReducer reducer)
    {
        if (Job is StreamingJob streaming)
        {
            RunReducerProgram(reducer, streaming);
            return;
        }
        Complete(reducer, reducer.Output, reducer.CompletedAt);
    }

    /// <summary>A streaming job's reduce task: its reducer program runs over the records, off the loop (see <see cref="StreamingReduce"/>).</summary>
    private void RunReducerProgram(DirectReducer reducer, StreamingJob job)
    {
        var context = _service.Context;
        string? outputPath = Description.Output.Kind == OutputKind.LocalFiles ? ServerJob.OutputPath(context.DataDirectory, Description, reducer.ReduceTask) : null;
        _reducerPrograms++;
        StreamingReduce.Start(context, job, reducer.Output.Path!, outputPath,
            output =>
            {
                _reducerPrograms--;
                if (Failure is not null)
                {
                    output.Dispose();
                    return;
                }
                Complete(reducer, output, context.Now);
            },
            reason =>
            {
                _reducerPrograms--;
                Fail(reason);
            });
    }

    private void Complete(DirectReducer reducer, ReduceOutput output, long completedAt)
    {
        var result = new ReduceTaskResult(JobId, reducer.ReduceTask, _service.Context.Self, completedAt, output.Records,
            output.LogicalBytes, output.StreamBytes, output.FileBytes, output.Checksum, output.Path);
        _completed.Add(result);
        _service.OnReduceTaskCompleted(result);
    }

    /// <summary>Runs job code from a transport callback: corrupt data or a job function's bug fails the job here, never the server.</summary>
    internal void Run(Action work)
    {
        if (Failure is not null)
        {
            return;
        }
        try
        {
            work();
        }
        catch (Exception e)
        {
            Fail($"{e.GetType().Name}: {e.Message}");
        }
    }

    internal void Fail(string reason)
    {
        if (Failure is null)
        {
            Failure = reason;
            _service.OnJobFailed(this);
        }
    }

    /// <summary>Tells the node the merge work done since the last call (the compute model; free on a real server).</summary>
    internal void Declare(ComputeWork kind, long consumed, ref long charged)
    {
        if (consumed > charged)
        {
            _service.Context.Compute(kind, consumed - charged);
            charged = consumed;
        }
    }

    /// <summary>
    /// Node <paramref name="failed"/> (an appliance: an agg box) is down and <paramref name="plan"/> is the trees
    /// without it. In every tree it merged for: its parent cuts its stream at the last key merged from it and takes
    /// its children's resent streams past that key instead; every node below it sends its stream again from the
    /// start, its children to their new parent (the next node on the path), the nodes further down to their own
    /// parents, which start over too (what the failed node had merged of theirs is lost with it).
    /// <paramref name="nodes"/> is the plan's node count.
    /// </summary>
    internal void OnNodeFailed(int failed, IAggregationPlan plan, int nodes)
    {
        var context = _service.Context;
        var hosts = context.Torus;
        int self = hosts.IndexOf(context.Self);
        var old = Plan;
        var options = Options;
        for (int r = 0; r < Description.ReduceTasks; r++)
        {
            for (int t = 0; t < old.Trees; t++)
            {
                if (old.ChildrenOf(r, t, failed) == 0 || self == failed)
                {
                    continue; // the failed node had no part in this tree
                }
                int parent = old.ParentOf(r, t, failed);
                if ((parent < 0 ? _roots[r] : parent) == self)
                {
                    var children = Enumerable.Range(0, nodes).Where(n => n != failed && n != _roots[r] && old.ParentOf(r, t, n) == failed).ToList();
                    var receiver = MergeFor(r, t);
                    receiver?.Cut(failed, t, children);
                    receiver?.Admission?.Forget(failed); // its children resend at once, unadmitted
                    continue;
                }
                if (!Below(old, r, t, self, failed, nodes))
                {
                    continue;
                }
                int newParent = plan.ParentOf(r, t, self);
                var parentAt = hosts.CoordinateOf(newParent < 0 ? _roots[r] : newParent);
                bool isServer = self < _service.Servers.Count;
                var local = isServer ? new LocalRunMerge(Job, LocalRuns(_mapOutputs, r, t, old.Trees), options.LocalBlockBytes) : null;
                if (_vertexOf.TryGetValue((r, t), out var vertex))
                {
                    vertex.Abandon();
                    var restarted = new ForwardingVertex(this, r, t, parentAt, plan.ChildrenOf(r, t, self), local, options.ReducerInputBytes, options.LocalBlockBytes)
                    {
                        IsRestart = true,
                    };
                    _vertices.Add(restarted);
                    _vertexOf[(r, t)] = restarted;
                    Run(() => restarted.Start(_service.Transport));
                }
                else if (_senders.FirstOrDefault(x => x.ReduceTask == r && x.Tree == t && !x.IsAbandoned) is { } sender)
                {
                    if (sender.IsStarted && !sender.IsDelivered)
                    {
                        _active--;
                    }
                    sender.Abandon();
                    var restarted = new DirectSender(this, r, t, parentAt, local!) { IsRestart = true, Order = _senders.Count };
                    _senders.Add(restarted);
                    _senderOf[(r, t)] = restarted;
                    _waiting.Enqueue(restarted, restarted.Order);
                }
                else
                {
                    continue;
                }
                RestartedStreams++;
            }
        }
        Plan = plan;
        StartWaiting();
    }

    // Whether node's stream of (r, t) passes through `failed` on its way to the root.
    private static bool Below(IAggregationPlan plan, int r, int t, int node, int failed, int nodes)
    {
        for (int hops = 0, at = node; hops < nodes; hops++)
        {
            at = plan.ParentOf(r, t, at);
            if (at == failed)
            {
                return true;
            }
            if (at < 0)
            {
                return false;
            }
        }
        return false;
    }

    private void StartWaiting()
    {
        while (_active < Options.ConcurrentStreams && _waiting.TryDequeue(out var sender, out _))
        {
            if (sender.IsAbandoned)
            {
                continue;
            }
            _active++;
            Run(() => sender.Start(_service.Transport));
        }
    }

    /// <summary>The local runs of a reduce task's stripes that travel on <paramref name="tree"/> (stripe mod trees).</summary>
    private static List<LocalRun> LocalRuns(IReadOnlyList<MapOutput> mapOutputs, int reduceTask, int tree, int trees)
    {
        var runs = new List<LocalRun>();
        foreach (var output in mapOutputs)
        {
            for (int stripe = tree; stripe < Records.Stripes.Count; stripe += trees)
            {
                var run = new LocalRun(output, reduceTask, stripe);
                if (!run.IsEmpty)
                {
                    runs.Add(run);
                }
            }
        }
        return runs;
    }
}
