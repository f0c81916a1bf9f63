using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Shuffle;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// One job on one server: its local map outputs, a vertex for every (reduce task, tree) whose root is elsewhere,
/// and a root reducer for each reduce task rooted here. Created by <see cref="CamdoopService.StartJob"/>; routes
/// segments and acks of the job to the right vertex.
/// </summary>
public sealed class ServerJob
{
    private readonly CamdoopService _service;
    private readonly Vertex?[] _vertices;
    private readonly Dictionary<int, RootReducer> _roots = [];
    private readonly List<ReduceTaskResult> _completed = [];
    private readonly Dictionary<(int Inputs, MergeMode Mode), Stack<StreamMerger>> _mergers = [];
    private int _unfinishedVertices;

    internal ServerJob(CamdoopService service, JobDescription description, IMapReduceJob job, IReadOnlyList<MapOutput> mapOutputs)
    {
        _service = service;
        Description = description;
        Job = job;
        MapOutputs = mapOutputs;
        var context = service.Context;
        Self = context.Self;
        Placement = new JobPlacement(context.Torus, description.JobId, description.ReduceTasks, description.Trees);
        // Non-associative reduce functions are merged only, whatever the mode (the Camdoop paper, §4.3).
        VertexMode = job.IsAssociativeCommutative && description.Mode == ShuffleMode.Camdoop ? MergeMode.Combine : MergeMode.Merge;
        _vertices = new Vertex?[description.ReduceTasks * TreeTopology.TreeCount];
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

    public ShuffleTransport Transport => _service.Transport;

    public CamdoopServiceOptions Options => _service.Options;

    /// <summary>Network streams this server receives for the job (children of its vertices and root reducers).</summary>
    public int InboundStreams { get; private set; }

    /// <summary>Every vertex output acknowledged and every local reduce task written.</summary>
    public bool IsFinished => _unfinishedVertices == 0 && _completed.Count == _roots.Count;

    /// <summary>Set when the job failed on this server (corrupt data, a job function threw); the reason.</summary>
    public string? Failure { get; private set; }

    /// <summary>The reduce tasks rooted here that completed.</summary>
    public IReadOnlyList<ReduceTaskResult> CompletedReduceTasks => _completed;

    public IEnumerable<RootReducer> RootReducers => _roots.Values;

    public IEnumerable<Vertex> Vertices => _vertices.Where(v => v is not null)!;

    /// <summary>Bytes that entered this server's vertices and reducers (children and local runs).</summary>
    public long AggregatedBytes => Vertices.Sum(v => v.AggregatedBytes) + _roots.Values.Sum(r => r.AggregatedBytes);

    public Vertex? Vertex(int reduceTask, int tree) => _vertices[(reduceTask * TreeTopology.TreeCount) + tree];

    public RootReducer? Root(int reduceTask) => _roots.GetValueOrDefault(reduceTask);

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
        var torus = Placement.Torus;
        var trees = Placement.Trees;
        var self = Self;
        int selfIndex = torus.IndexOf(self);
        var parentIds = new Dictionary<Coordinate, KeyRouting.Key>();
        KeyRouting.Key VertexId(Coordinate c)
        {
            if (!parentIds.TryGetValue(c, out var id))
            {
                parentIds[c] = id = Placement.VertexId(c);
            }
            return id;
        }
        Func<Coordinate, KeyRouting.Key> vertexId = VertexId; // one delegate, not one per vertex
        Span<Port> ports = stackalloc Port[Ports.Count];
        var children = new List<InboundStream>();
        var locals = new List<LocalRun>();
        for (int r = 0; r < Description.ReduceTasks; r++)
        {
            var root = Placement.Root(r);
            if (Placement.RootIndex(r) == selfIndex)
            {
                children.Clear();
                locals.Clear();
                for (int t = 0; t < TreeTopology.TreeCount; t++)
                {
                    AddChildren(r, t, root, ports, children, vertexId);
                    AddLocals(r, t, locals);
                }
                string? path = Description.Output.Kind == OutputKind.LocalFiles ? OutputPath(r) : null;
                _roots[r] = new RootReducer(this, r, [.. children], [.. locals], new ReduceOutput(Job, path));
                continue;
            }
            for (int t = 0; t < TreeTopology.TreeCount; t++)
            {
                children.Clear();
                locals.Clear();
                AddChildren(r, t, root, ports, children, vertexId);
                AddLocals(r, t, locals);
                var parentPort = trees.ParentPort(root, self, t)!.Value;
                var parent = torus.Neighbour(self, parentPort);
                var output = new OutboundStream(JobId, r, t, self, VertexId(parent), parentPort, Options.Shuffle.InitialWindowBytes, Options.Shuffle.MaxWindowBytes,
                    _service.Transport.Buffers);
                _vertices[(r * TreeTopology.TreeCount) + t] = new Vertex(this, r, t, [.. children], [.. locals], VertexMode, output);
                _unfinishedVertices++;
            }
        }
    }

    private void AddChildren(int reduceTask, int tree, Coordinate root, Span<Port> ports, List<InboundStream> children, Func<Coordinate, KeyRouting.Key> vertexId)
    {
        var torus = Placement.Torus;
        int count = Placement.Trees.GetChildPorts(root, Self, tree, ports);
        for (int i = 0; i < count; i++)
        {
            var child = torus.Neighbour(Self, ports[i]);
            children.Add(new InboundStream(JobId, reduceTask, tree, child, vertexId(child), ports[i], children.Count));
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

    /// <summary>part-NNNNN under the output directory (default jobs/&lt;id&gt;/output) of this server's data directory.</summary>
    public string OutputPath(int reduceTask)
    {
        string directory = Description.Output.Directory.Length > 0
            ? Path.Combine(_service.Context.DataDirectory, Description.Output.Directory)
            : Path.Combine(_service.Context.DataDirectory, "jobs", JobId.ToString("x16", System.Globalization.CultureInfo.InvariantCulture), "output");
        return Path.Combine(directory, ReduceOutput.PartName(reduceTask));
    }

    /// <summary>Registers the streams, advertises every receive window and starts every vertex.</summary>
    internal void Start()
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
            if (v is null)
            {
                continue;
            }
            foreach (var child in v.Children)
            {
                transport.QueueAck(child);
            }
            v.Start();
        }
        foreach (var root in _roots.Values)
        {
            foreach (var child in root.Children)
            {
                transport.QueueAck(child);
            }
            root.Start();
        }
    }

    internal void OnSegment(in DataSegment segment, int hops)
    {
        if (segment.ReduceTask >= Description.ReduceTasks)
        {
            Transport.Counters.UnknownStream++;
            return;
        }
        VertexBase? target = _roots.TryGetValue(segment.ReduceTask, out var root) ? root : Vertex(segment.ReduceTask, segment.Tree);
        var child = target?.FindChild(segment.Tree, segment.Child);
        if (child is null)
        {
            Transport.Counters.UnknownStream++;
            return;
        }
        long before = child.Received;
        target!.OnSegment(child, segment);
        Transport.Counters.DataByteHops += (child.Received - before) * hops;
    }

    internal void OnAck(in AckEntry ack)
    {
        var counters = Transport.Counters;
        if (ack.ReduceTask >= Description.ReduceTasks || ack.Child != Self)
        {
            counters.UnknownStream++;
            return;
        }
        var vertex = Vertex(ack.ReduceTask, ack.Tree);
        if (vertex is null)
        {
            counters.UnknownStream++;
            return;
        }
        var stream = vertex.Output;
        if (stream.IsComplete)
        {
            return;
        }
        long now = Transport.Context.Now;
        if (!stream.OnAck((long)ack.Offset, ack.Window, ack.Flags, now, out long rtt, out bool progress))
        {
            counters.InvalidAcks++;
            return;
        }
        Transport.OnAckApplied(stream, rtt);
        if (stream.IsComplete)
        {
            vertex.OnOutputComplete();
            _unfinishedVertices--;
            _service.OnJobProgress(this);
        }
        else if (progress && !stream.SourceDone)
        {
            MarkDirty(vertex);
        }
    }

    internal void OnReduceTaskCompleted(RootReducer root)
    {
        var output = root.Output;
        var result = new ReduceTaskResult(JobId, root.ReduceTask, Self, root.CompletedAt, output.Records, output.LogicalBytes,
            output.StreamBytes, output.FileBytes, output.Checksum, output.Path);
        _completed.Add(result);
        _service.OnReduceTaskCompleted(this, result);
    }

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
