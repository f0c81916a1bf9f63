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
/// modes place them, so runs are comparable.
/// </summary>
public sealed class DirectJob
{
    private readonly DirectShuffleService _service;
    private readonly Queue<DirectSender> _waiting = new();
    private readonly List<DirectSender> _senders = [];
    private readonly List<ForwardingVertex> _vertices = [];
    private readonly Dictionary<(int ReduceTask, int Tree), ForwardingVertex> _vertexOf = [];
    private readonly Dictionary<int, DirectReducer> _reducers = [];
    private readonly List<ReduceTaskResult> _completed = [];
    private int _active;

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
        Plan = plan ?? new DirectPlan(servers, roots);
        int trees = Plan.Trees;
        var options = service.Options;
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
                string? path = description.Output.Kind == OutputKind.LocalFiles ? ServerJob.OutputPath(context.DataDirectory, description, r) : null;
                _reducers.Add(r, new DirectReducer(this, r, streams, local, new ReduceOutput(job, path), options.ReducerInputBytes, options.LocalBlockBytes));
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
                    _senders.Add(new DirectSender(this, r, t, parentAt, local!));
                }
                else
                {
                    var vertex = new ForwardingVertex(this, r, t, parentAt, children, local, options.ReducerInputBytes, options.LocalBlockBytes);
                    _vertices.Add(vertex);
                    _vertexOf.Add((r, t), vertex);
                }
            }
        }
    }

    /// <summary>Where this job's streams go (the direct plan unless the job was started with another).</summary>
    public IAggregationPlan Plan { get; }

    public JobDescription Description { get; }

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

    /// <summary>Every stream delivered and every reduce task rooted here written.</summary>
    public bool IsFinished => _senders.All(s => s.IsDelivered) && _vertices.All(v => v.IsDelivered) && _reducers.Values.All(r => r.IsFinished);

    internal long Now => _service.Context.Now;

    internal void Start()
    {
        foreach (var sender in _senders)
        {
            _waiting.Enqueue(sender);
        }
        // Interior vertices open their streams at once, outside the limit: one waiting for a slot behind streams
        // that wait for it could deadlock.
        foreach (var vertex in _vertices)
        {
            Run(() => vertex.Start(_service.Transport));
        }
        StartWaiting();
        foreach (var reducer in _reducers.Values)
        {
            Run(reducer.Pump);
        }
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
        var output = reducer.Output;
        var result = new ReduceTaskResult(JobId, reducer.ReduceTask, _service.Context.Self, reducer.CompletedAt, output.Records,
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

    private void StartWaiting()
    {
        while (_active < _service.Options.ConcurrentStreams && _waiting.TryDequeue(out var sender))
        {
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
