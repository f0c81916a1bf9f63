using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Shuffle;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// One job on one server: its local map outputs, a vertex for every (reduce task, tree) whose root is elsewhere,
/// and a root reducer for each reduce task rooted here; after failures also the vertices, root reducers and map tasks
/// of failed servers that this server took over (ServerJob.Recovery.cs). Created by <see cref="CamdoopService.StartJob(JobDescription, IMapReduceJob, IReadOnlyList{MapOutput}, IMapTaskSource)"/>;
/// routes segments, acks and restart requests of the job to the right vertex.
/// </summary>
public sealed partial class ServerJob
{
    private readonly CamdoopService _service;
    private readonly Vertex?[] _vertices;
    private readonly Dictionary<int, RootReducer> _roots = [];
    private readonly List<ReduceTaskResult> _completed = [];
    private readonly Dictionary<(int Inputs, MergeMode Mode), Stack<StreamMerger>> _mergers = [];
    private readonly int _selfIndex;
    private readonly Coordinate[] _rootOf;
    private readonly int[] _generation;
    private int _unfinishedVertices;

    internal ServerJob(CamdoopService service, JobDescription description, IMapReduceJob job, IReadOnlyList<MapOutput> mapOutputs,
        IMapTaskSource mapTasks, ServerSet view)
    {
        _service = service;
        Description = description;
        Job = job;
        MapOutputs = mapOutputs;
        MapTasks = mapTasks;
        var context = service.Context;
        Self = context.Self;
        _selfIndex = context.Torus.IndexOf(Self);
        Placement = JobPlacement.For(context.Torus, description);
        _view = new JobView(Placement.Torus, view, _selfIndex);
        _adopted = new AdoptedVertices(this, service, _view);
        _reruns = new MapTaskReruns(this, service, _view);
        _resumeRequests = new ResumeRequests(this, service, _view);
        _restarts = new StreamRestarts(this, service, _view, _adopted, _reruns);
        // Non-associative reduce functions are merged only, whatever the mode (the Camdoop paper, §4.3).
        VertexMode = job.IsAssociativeCommutative && description.Mode == ShuffleMode.Camdoop ? MergeMode.Combine : MergeMode.Merge;
        var shuffle = service.Options.Shuffle;
        RetentionBytes = service.Options.ResumeRetentionBytes >= 0
            ? service.Options.ResumeRetentionBytes
            : (2L * shuffle.MaxWindowBytes) + (2L * ShuffleWire.MaxSegmentBytes) + (16 * 1024);
        _vertices = new Vertex?[description.ReduceTasks * TreeTopology.TreeCount];
        _rootOf = new Coordinate[description.ReduceTasks];
        _generation = new int[description.ReduceTasks];
        for (int r = 0; r < description.ReduceTasks; r++)
        {
            _rootOf[r] = Placement.Root(r);
        }
        Build();
        long budget = description.MemoryBudgetBytes > 0 ? description.MemoryBudgetBytes : service.Options.MemoryBudgetBytes;
        MergerInitialInputBytes = service.Options.MergerInitialInputBytes > 0
            ? service.Options.MergerInitialInputBytes
            : (int)Math.Clamp(budget / Math.Max(1L, 8L * InboundStreams), 256, 16 * 1024);
    }

    /// <summary>Initial buffer per merger input of this job's vertices.</summary>
    public int MergerInitialInputBytes { get; }

    public JobDescription Description { get; }

    public ulong JobId => Description.JobId;

    public IMapReduceJob Job { get; }

    public JobPlacement Placement { get; }

    public Coordinate Self { get; }

    public MergeMode VertexMode { get; }

    public IReadOnlyList<MapOutput> MapOutputs { get; }

    /// <summary>Which map tasks ran where, and how to run one again (failure recovery).</summary>
    public IMapTaskSource MapTasks { get; }

    /// <summary>Bytes each merging vertex's output keeps before its acknowledged offset, for a restart without regenerating.</summary>
    public long RetentionBytes { get; }

    public ShuffleTransport Transport => _service.Transport;

    public CamdoopServiceOptions Options => _service.Options;

    /// <summary>Network streams this server receives for the job (children of its vertices and root reducers).</summary>
    public int InboundStreams { get; internal set; }

    /// <summary>
    /// The job's coordinator said it completed as this part was dropped: every reduce task is stored, though this
    /// server may not have seen its streams' last acknowledgements.
    /// </summary>
    public bool CompletedEverywhere { get; internal set; }

    /// <summary>Every vertex output hosted here acknowledged and every reduce task rooted here written.</summary>
    public bool IsFinished => _unfinishedVertices == 0 && _roots.Values.All(r => r.IsFinished) && _reducerPrograms == 0;

    /// <summary>Set when the job failed on this server (corrupt data, a job function threw); the reason.</summary>
    public string? Failure { get; private set; }

    /// <summary>The reduce tasks rooted here that completed.</summary>
    public IReadOnlyList<ReduceTaskResult> CompletedReduceTasks => _completed;

    /// <summary>The root reducers hosted here: this server's own and those it took over from failed servers.</summary>
    public IEnumerable<RootReducer> RootReducers => _roots.Values;

    /// <summary>Every vertex hosted here: this server's own, those taken over, and the leaves of map tasks run again.</summary>
    public IEnumerable<Vertex> Vertices => _vertices.Where(v => v is not null).Concat(_adopted.Vertices).Concat(_reruns.Tasks.SelectMany(r => r.Leaves))!;

    /// <summary>Bytes that entered this server's vertices and reducers (children and local runs).</summary>
    public long AggregatedBytes => Vertices.Sum(v => v.AggregatedBytes) + _roots.Values.Sum(r => r.AggregatedBytes);

    /// <summary>This server's own vertex of (<paramref name="reduceTask"/>, <paramref name="tree"/>), or null.</summary>
    public Vertex? Vertex(int reduceTask, int tree) => _vertices[(reduceTask * TreeTopology.TreeCount) + tree];

    /// <summary>The root reducer of <paramref name="reduceTask"/> hosted here, or null.</summary>
    public RootReducer? Root(int reduceTask) => _roots.GetValueOrDefault(reduceTask);

    /// <summary>
    /// Where reduce task <paramref name="reduceTask"/>'s root is now: its placement's, or after that failed the server it
    /// started over on (see <see cref="JobPlacement.NextRoot"/>).
    /// </summary>
    public Coordinate RootOf(int reduceTask) => _rootOf[reduceTask];

    /// <summary>How many times reduce task <paramref name="reduceTask"/> started over because its root failed.</summary>
    public int GenerationOf(int reduceTask) => _generation[reduceTask];

    internal void MarkDirty(VertexBase vertex) => _service.MarkDirty(vertex);

    /// <summary>
    /// A merger with <paramref name="inputs"/> inputs in <paramref name="mode"/>, reused from a finished vertex when
    /// one is free: few vertices merge at once even when thousands exist, and a merger's buffers cost more than its work.
    /// </summary>
    internal StreamMerger RentMerger(int inputs, MergeMode mode)
    {
        var pool = _mergers.GetValueOrDefault((inputs, mode));
        if (pool is { Count: > 0 })
        {
            return pool.Pop();
        }
        MergersCreated++;
        return new StreamMerger(Job, inputs, mode, MergerInitialInputBytes, Transport.Buffers);
    }

    internal void ReturnMerger(StreamMerger merger)
    {
        merger.Reset();
        merger.TrimBuffers(MergerInitialInputBytes);
        var key = (merger.InputCount, merger.Mode);
        if (!_mergers.TryGetValue(key, out var pool))
        {
            _mergers[key] = pool = new Stack<StreamMerger>();
        }
        pool.Push(merger);
    }

    /// <summary>Mergers allocated for this job on this server (the rest were reused).</summary>
    public int MergersCreated { get; private set; }

    private void Build()
    {
        for (int r = 0; r < Description.ReduceTasks; r++)
        {
            BuildReduceTask(r);
        }
    }

    /// <summary>
    /// This server's part of reduce task <paramref name="reduceTask"/> on the trees rooted at its current root: the root
    /// reducer when that is here, else a vertex per tree, their streams in the current generation's first epoch.
    /// </summary>
    private void BuildReduceTask(int reduceTask)
    {
        var torus = Placement.Torus;
        var trees = Placement.Trees;
        var self = Self;
        var root = _rootOf[reduceTask];
        byte epoch = ShuffleWire.FirstEpoch(_generation[reduceTask]);
        Span<Port> ports = stackalloc Port[Ports.Count];
        var children = new List<InboundStream>();
        var locals = new List<LocalRun>();
        if (root == self)
        {
            for (int t = 0; t < TreeTopology.TreeCount; t++)
            {
                AddChildren(reduceTask, t, root, self, ports, children, epoch);
                AddLocals(reduceTask, t, locals);
            }
            string? path = PartPath(reduceTask);
            var continued = ContinueFromReplica(reduceTask, path, out var point);
            var reducer = new RootReducer(this, reduceTask, self, [.. children], [.. locals], continued ?? new ReduceOutput(Job, path));
            if (point is not null)
            {
                reducer.ResumeFrom(point);
            }
            _roots[reduceTask] = reducer;
            return;
        }
        BuildReplica(reduceTask);
        for (int t = 0; t < TreeTopology.TreeCount; t++)
        {
            children.Clear();
            locals.Clear();
            AddChildren(reduceTask, t, root, self, ports, children, epoch);
            AddLocals(reduceTask, t, locals);
            var parentPort = trees.ParentPort(root, self, t)!.Value;
            var parent = torus.Neighbour(self, parentPort);
            var output = new OutboundStream(JobId, reduceTask, t, self, VertexIdOf(parent), parentPort, Options.Shuffle.InitialWindowBytes,
                Options.Shuffle.MaxWindowBytes, _service.Transport.Buffers, epoch: epoch);
            var vertex = new Vertex(this, reduceTask, t, self, [.. children], [.. locals], VertexMode, output)
            {
                OutputHost = torus.IndexOf(parent),
            };
            if (!vertex.IsPassThrough)
            {
                output.SetRetention(RetentionBytes);
            }
            _vertices[(reduceTask * TreeTopology.TreeCount) + t] = vertex;
            _unfinishedVertices++;
        }
    }

    // Vertex ids of the neighbours, computed once each (at R = N a server builds thousands of streams to them).
    private readonly Dictionary<Coordinate, Key> _vertexIds = [];

    private Key VertexIdOf(Coordinate server)
    {
        if (!_vertexIds.TryGetValue(server, out var id))
        {
            _vertexIds[server] = id = Placement.VertexId(server);
        }
        return id;
    }

    private void AddChildren(int reduceTask, int tree, Coordinate root, Coordinate home, Span<Port> ports, List<InboundStream> children, byte epoch)
    {
        var torus = Placement.Torus;
        int count = Placement.Trees.GetChildPorts(root, home, tree, ports);
        for (int i = 0; i < count; i++)
        {
            var child = torus.Neighbour(home, ports[i]);
            var stream = new InboundStream(JobId, reduceTask, tree, child, VertexIdOf(child), ports[i], children.Count, epoch: epoch)
            {
                ChildHost = torus.IndexOf(child),
            };
            stream.TrackRecords();
            children.Add(stream);
            InboundStreams++;
        }
    }

    private void AddLocals(int reduceTask, int stripe, List<LocalRun> locals)
    {
        foreach (var output in MapOutputs)
        {
            var run = new LocalRun(output, reduceTask, stripe);
            if (!run.IsEmpty)
            {
                locals.Add(run);
            }
        }
    }

    /// <summary>
    /// Where reduce task <paramref name="reduceTask"/>'s root reducer writes here: its output file, or null when output
    /// is discarded; for a streaming job, the input of its reducer program.
    /// </summary>
    private string? PartPath(int reduceTask) =>
        Job is StreamingJob ? StreamingReduce.InputPath(_service.Context.DataDirectory, JobId, reduceTask)
        : Description.Output.Kind == OutputKind.LocalFiles ? OutputPath(reduceTask) : null;

    /// <summary>part-NNNNN under the output directory (default jobs/&lt;id&gt;/output) of this server's data directory.</summary>
    public string OutputPath(int reduceTask) => OutputPath(_service.Context.DataDirectory, Description, reduceTask);

    /// <summary>part-NNNNN of <paramref name="description"/>'s job under <paramref name="dataDirectory"/>.</summary>
    public static string OutputPath(string dataDirectory, JobDescription description, int reduceTask)
    {
        ArgumentNullException.ThrowIfNull(description);
        string directory = description.Output.Directory.Length > 0
            ? Path.Combine(dataDirectory, description.Output.Directory)
            : Path.Combine(dataDirectory, "jobs", description.JobId.ToString("x16", System.Globalization.CultureInfo.InvariantCulture), "output");
        return Path.Combine(directory, ReduceOutput.PartName(reduceTask));
    }

    /// <summary>
    /// Registers the streams, advertises every receive window and starts every vertex; then loses the servers that
    /// were <paramref name="down"/> when the job started, as failures at time zero.
    /// </summary>
    internal void Start(IReadOnlyList<Coordinate> down)
    {
        var transport = Transport;
        foreach (var v in _vertices)
        {
            if (v is not null)
            {
                transport.Register(v.Output);
            }
        }
        foreach (var v in _vertices)
        {
            if (v is not null)
            {
                StartVertex(v);
            }
        }
        foreach (var root in _roots.Values)
        {
            StartVertex(root);
            StartReplicating(root);
        }
        foreach (var replica in _replicas.Values)
        {
            StartVertex(replica);
        }
        if (down.Count > 0)
        {
            OnServersLost(down);
        }
    }

    /// <summary>Advertises the vertex's receive windows (unless told not to) and starts it.</summary>
    private void StartVertex(VertexBase vertex, bool advertise = true)
    {
        foreach (var child in advertise ? vertex.Children : [])
        {
            Transport.QueueAck(child);
        }
        vertex.Start();
    }

    internal void OnSegment(in DataSegment segment, int hops, Coordinate sender)
    {
        var target = ParentOf(segment.Stream);
        var child = target?.FindChild(segment.Tree, segment.Child, segment.Source);
        if (child is null)
        {
            Transport.Counters.UnknownStream++;
            return;
        }
        long before = child.Received;
        target!.OnSegment(child, segment, sender);
        Transport.Counters.DataByteHops += (child.Received - before) * hops;
    }

    /// <summary>The vertex hosted here that receives stream <paramref name="id"/>, or null.</summary>
    private VertexBase? ParentOf(in StreamId id)
    {
        if ((uint)id.ReduceTask >= (uint)Description.ReduceTasks)
        {
            return null;
        }
        var root = _rootOf[id.ReduceTask];
        if (id.Tree == JobPlacement.RootTree)
        {
            return _replicas.TryGetValue(id.ReduceTask, out var replica) && replica.Root == id.Child && id.Source == 0 ? replica : null;
        }
        Coordinate home;
        if (id.Source == 0)
        {
            if (id.Child == root || Placement.Trees.GetParent(root, id.Child, id.Tree) is not { } parent)
            {
                return null;
            }
            home = parent;
        }
        else
        {
            home = id.Child; // a map task's parent is the vertex on its own server
        }
        if (home == root)
        {
            return _roots.GetValueOrDefault(id.ReduceTask);
        }
        return home == Self ? Vertex(id.ReduceTask, id.Tree) : _adopted.Find(id.ReduceTask, id.Tree, Placement.Torus.IndexOf(home));
    }

    /// <summary>The vertex hosted here that sends stream <paramref name="id"/>, or null.</summary>
    internal Vertex? SenderOf(in StreamId id)
    {
        if ((uint)id.ReduceTask >= (uint)Description.ReduceTasks)
        {
            return null;
        }
        if (id.Source != 0)
        {
            return _reruns.Leaf(id);
        }
        return id.Child == Self ? Vertex(id.ReduceTask, id.Tree) : _adopted.Find(id.ReduceTask, id.Tree, Placement.Torus.IndexOf(id.Child));
    }

    internal void OnAck(in AckEntry ack)
    {
        if (ack.Tree == JobPlacement.RootTree)
        {
            OnReplicaAck(ack);
            return;
        }
        var vertex = SenderOf(ack.Stream);
        if (vertex is null)
        {
            Transport.Counters.UnknownStream++;
            return;
        }
        var stream = vertex.Output;
        if (!TryApplyAck(stream, ack, out bool progress))
        {
            return;
        }
        if (stream.IsComplete)
        {
            if (stream.Epoch > 0)
            {
                Log($"stream {stream.Id.ReduceTask}/{stream.Id.Tree}/{stream.Id.Child.Name}/{stream.Id.Source} is complete in epoch {stream.Epoch}");
            }
            vertex.OnOutputComplete();
            _unfinishedVertices--;
            _service.OnJobProgress(this);
        }
        else if (progress && !stream.SourceDone)
        {
            MarkDirty(vertex);
        }
    }

    /// <summary>
    /// Applies an acknowledgement to the outbound stream it names: false (counted when it is wrong) for one of another
    /// epoch, for a stream complete or suspended, or with an offset or window the stream cannot have.
    /// </summary>
    private bool TryApplyAck(OutboundStream stream, in AckEntry ack, out bool progress)
    {
        progress = false;
        if (ack.Epoch != stream.Epoch)
        {
            Transport.Counters.StaleEpoch++;
            return false;
        }
        if (stream.IsComplete || stream.Suspended)
        {
            return false;
        }
        if (!stream.OnAck((long)ack.Offset, ack.Window, ack.Flags, Transport.Context.Now, out long rtt, out progress))
        {
            Transport.Counters.InvalidAcks++;
            return false;
        }
        Transport.OnAckApplied(stream, rtt);
        return true;
    }

    internal void OnReduceTaskCompleted(RootReducer root)
    {
        if (Job is StreamingJob streaming)
        {
            RunReducerProgram(root, streaming);
            return;
        }
        Complete(root, root.Output, root.CompletedAt);
    }

    /// <summary>Reduce task <paramref name="root"/> wrote all of its <paramref name="output"/> at <paramref name="completedAt"/>.</summary>
    private void Complete(RootReducer root, ReduceOutput output, long completedAt)
    {
        var result = new ReduceTaskResult(JobId, root.ReduceTask, Self, completedAt, output.Records, output.LogicalBytes,
            output.StreamBytes, output.FileBytes, output.Checksum, output.Path);
        _completed.Add(result);
        if (root.IsAdopted)
        {
            Log($"reduce task {root.ReduceTask}, taken over from {root.Home.Name}, is complete");
        }
        _doneReduceTasks.Add(root.ReduceTask);
        _service.OnReduceTaskCompleted(this, result);
    }

    internal void Log(string message) => Transport.Context.Log(LogLevel.Info, $"job {JobId:x16}: {message}");

    /// <summary>Stops the job on this server after an error in its data or code; the reason is kept and logged.</summary>
    internal void Fail(string reason)
    {
        if (Failure is not null)
        {
            return;
        }
        Failure = reason;
        Transport.Unregister(JobId);
        foreach (var root in _roots.Values)
        {
            root.Output.Dispose();
        }
    }
}
