using Camdoop.KeyRouting;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Shuffle;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

// Failure recovery (the Camdoop paper, §4.2). Everything a job does is named by keys: a vertex by (reduce task, tree,
// the server it sits on in the tree), a map task by its id. A failed server's keys move to live servers by the same
// deterministic remap on every server, in the job's view (the servers up when it started, less every one lost since:
// a server that comes back does not rejoin the job). The protocol is driven by parents:
// - a parent whose child's server is lost asks the child's new owner to restart the stream after the last complete
//   record it holds; the new owner takes the vertex over and asks the vertex's children, in turn, for their records
//   from that key (a map task of the failed server is run again where its id now maps);
// - a child whose parent's server is lost stops sending and waits for the parent's new host to ask;
// - a reduce task whose root's server is lost starts over, on every server, as its next generation: on new trees
//   rooted two hops away (JobPlacement.NextRoot), every vertex sending its whole stream again.
// A child that kept enough of its output starts again from those bytes; otherwise it merges (or reads) again from the
// key. Streams are sorted, so records before the point are never sent twice and none after it is lost.
public sealed partial class ServerJob
{
    private readonly ServerSet _view;
    private readonly Dictionary<(int R, int Tree, int Home), Vertex> _adopted = [];
    private readonly Dictionary<(int Server, int Source), RerunMapTask> _reruns = [];
    private readonly HashSet<int> _doneReduceTasks = [];
    private readonly List<(VertexBase Parent, InboundStream Child)> _resuming = [];

    // Restart requests for vertices or map tasks of servers this server does not know to be lost yet: answered as
    // soon as it does (the requester's view ran ahead), rather than at the requester's next retry.
    private readonly Dictionary<StreamId, (ResumePoint Point, Coordinate Requester, byte Epoch)> _deferred = [];
    private bool _resumeTimerArmed;

    /// <summary>Whether <paramref name="server"/> still takes part in the job in this server's view.</summary>
    public bool IsInJob(Coordinate server) => _view.Contains(Placement.Torus.IndexOf(server));

    /// <summary>Vertices and root reducers of failed servers hosted here.</summary>
    public int AdoptedCount => _adopted.Count + _roots.Values.Count(r => r.IsAdopted);

    /// <summary>Map tasks of failed servers run again here.</summary>
    public int RerunCount => _reruns.Count;

    /// <summary>
    /// Reduce task <paramref name="reduceTask"/> has written its whole output somewhere: if its root's server fails
    /// later, nobody starts it over (the job's coordinator tells every server).
    /// </summary>
    public void NoteReduceTaskDone(int reduceTask) => _doneReduceTasks.Add(reduceTask);

    /// <summary>The server that owns <paramref name="key"/> in the job's view.</summary>
    private int OwnerIndex(in Key key) => KeyMapper.Shared(Placement.Torus).OwnerIndex(key, _view);

    /// <summary>The key the sender of stream <paramref name="child"/> is owned by: its vertex's, or its map task's.</summary>
    private Key OwnerKeyOf(InboundStream child) => child.Source == 0
        ? Placement.VertexKey(child.Child, child.ReduceTask, child.Tree, RootOf(child.ReduceTask))
        : MapTasks.MapTasksOf(child.Child)[child.Source - 1];

    /// <summary>
    /// Servers became unreachable: they leave the job for good. Children of theirs resume at the new owners, outputs
    /// to them wait, their root reducers and map tasks that now map here start here.
    /// </summary>
    internal void OnServersLost(IReadOnlyList<Coordinate> lost)
    {
        var torus = Placement.Torus;
        var newlyLost = new List<Coordinate>();
        foreach (var server in lost)
        {
            int index = torus.IndexOf(server);
            if (_view.Contains(index))
            {
                _view.Remove(index);
                newlyLost.Add(server);
            }
        }
        if (newlyLost.Count == 0 || Failure is not null)
        {
            return;
        }
        for (int r = 0; r < Description.ReduceTasks; r++)
        {
            if (!_doneReduceTasks.Contains(r) && !IsInJob(RootOf(r)))
            {
                Reroot(r);
            }
        }
        // Vertices taken over here that another server owns now (views differ for a moment): theirs, not ours.
        foreach (var (key, vertex) in _adopted.ToList())
        {
            if (OwnerIndex(vertex.OwnerKey) != _selfIndex)
            {
                DropAdopted(key, vertex);
            }
        }
        LoseReplicaServers();
        foreach (var parent in HostedParents())
        {
            foreach (var child in parent.Children)
            {
                if (child.FinReceived)
                {
                    continue;
                }
                if (child.PendingResume is not null)
                {
                    if (OwnerIndex(OwnerKeyOf(child)) != child.ResumeTarget)
                    {
                        RequestResume(parent, child); // the owner asked may be gone: ask the new one
                    }
                }
                else if (child.ChildHost < 0 || !_view.Contains(child.ChildHost))
                {
                    parent.OnChildLost(child);
                }
            }
        }
        foreach (var vertex in HostedSenders())
        {
            if (vertex.OutputHost >= 0 && !_view.Contains(vertex.OutputHost) && !vertex.Output.Suspended)
            {
                vertex.Output.Suspend();
            }
        }
        foreach (var server in newlyLost)
        {
            var ids = MapTasks.MapTasksOf(server);
            for (int j = 0; j < ids.Count; j++)
            {
                if (OwnerIndex(ids[j]) == _selfIndex)
                {
                    EnsureRerun(server, (byte)(j + 1));
                }
            }
        }
        UpdatePorts();
        if (_deferred.Count > 0)
        {
            var deferred = _deferred.ToList();
            _deferred.Clear();
            foreach (var (id, (point, requester, epoch)) in deferred)
            {
                Resume(id, point, requester, epoch);
            }
        }
        _service.OnJobProgress(this);
    }

    /// <summary>Every vertex hosted here that has children: own and adopted vertices, root reducers.</summary>
    private IEnumerable<VertexBase> HostedParents()
    {
        foreach (var v in _vertices)
        {
            if (v is not null && v.Children.Count > 0)
            {
                yield return v;
            }
        }
        foreach (var v in _adopted.Values)
        {
            yield return v;
        }
        foreach (var r in _roots.Values)
        {
            yield return r;
        }
    }

    /// <summary>Every vertex hosted here that sends a stream: own and adopted vertices, leaves of map tasks run again.</summary>
    private IEnumerable<Vertex> HostedSenders() => Vertices;

    /// <summary>
    /// After a route change: each stream leaves on the first hop of a shortest live path to the server it talks to (its
    /// tree link while that is one), so a cut cable or a far parent does not stall it.
    /// </summary>
    internal void UpdatePorts()
    {
        var transport = Transport;
        foreach (var vertex in HostedSenders())
        {
            if (vertex.OutputHost >= 0)
            {
                transport.Move(vertex.Output, FirstHop(vertex.OutputHost, vertex.Output.Port));
            }
        }
        foreach (var parent in HostedParents())
        {
            foreach (var child in parent.Children)
            {
                if (child.ChildHost >= 0)
                {
                    transport.Move(child, FirstHop(child.ChildHost, child.Port));
                }
            }
        }
    }

    /// <summary>The port toward <paramref name="server"/>: <paramref name="preferred"/> if it starts a shortest live path.</summary>
    private Port FirstHop(int server, Port preferred)
    {
        var context = Transport.Context;
        if (server == _selfIndex)
        {
            // Delivered here without a link; any live port's queue paces it.
            return context.IsLinkUp(preferred) ? preferred : FirstLivePort(preferred);
        }
        byte mask = Transport.Router.NextHopPorts(Placement.Torus.CoordinateOf(server));
        if (mask == 0 || (mask & (1 << (int)preferred)) != 0)
        {
            return preferred;
        }
        return (Port)System.Numerics.BitOperations.TrailingZeroCount(mask);
    }

    private Port FirstLivePort(Port fallback)
    {
        foreach (var port in Ports.All)
        {
            if (Transport.Context.IsLinkUp(port))
            {
                return port;
            }
        }
        return fallback;
    }

    /// <summary>A parent's request to restart one of this server's streams (or one it now owns).</summary>
    internal void OnResume(in ResumeRequest request)
    {
        var counters = Transport.Counters;
        counters.ResumesReceived++;
        var id = request.Stream;
        if ((uint)id.ReduceTask >= (uint)Description.ReduceTasks || (id.Child == RootOf(id.ReduceTask) && id.Source == 0))
        {
            counters.UnknownStream++;
            return;
        }
        var point = request.HasKey ? ResumePoint.After(request.Key, request.Skip) : ResumePoint.Start;
        Resume(id, point, request.Requester, request.KnownEpoch);
    }

    private void Resume(StreamId id, ResumePoint point, Coordinate requester, byte knownEpoch)
    {
        var counters = Transport.Counters;
        int generation = ShuffleWire.Generation(knownEpoch), current = GenerationOf(id.ReduceTask);
        if (generation < current)
        {
            counters.StaleResumes++; // from a parent that has not started the reduce task over yet: it asks again then
            return;
        }
        if (generation > current)
        {
            // The requester knows the task's root is lost and this server does not yet: answering now would restart a
            // stream of the generation about to be torn down. Answered once this server starts the task over too.
            _deferred[id] = (point, requester, knownEpoch);
            return;
        }
        Vertex? vertex;
        if (id.Source == 0)
        {
            vertex = SenderOf(id);
            if (vertex is null)
            {
                if (IsInJob(id.Child))
                {
                    _deferred[id] = (point, requester, knownEpoch); // its server is not known here to be lost yet
                    return;
                }
                if (OwnerIndex(Placement.VertexKey(id.Child, id.ReduceTask, id.Tree, RootOf(id.ReduceTask))) != _selfIndex)
                {
                    counters.UnknownStream++; // not ours to take over: the parent asks the owner it sees next
                    return;
                }
                vertex = AdoptVertex(id.ReduceTask, id.Tree, id.Child);
            }
        }
        else
        {
            var ids = MapTasks.MapTasksOf(id.Child);
            if (id.Source > ids.Count)
            {
                counters.UnknownStream++;
                return;
            }
            if (IsInJob(id.Child))
            {
                _deferred[id] = (point, requester, knownEpoch);
                return;
            }
            if (OwnerIndex(ids[id.Source - 1]) != _selfIndex)
            {
                counters.UnknownStream++;
                return;
            }
            var rerun = EnsureRerun(id.Child, id.Source);
            if (rerun.Output is null)
            {
                rerun.Waiting[(id.ReduceTask, id.Tree)] = (point, requester, knownEpoch);
                return;
            }
            vertex = rerun.Leaf(id.ReduceTask, id.Tree, create: true)!;
        }
        Restart(vertex, point, requester, knownEpoch);
    }

    /// <summary>Restarts <paramref name="vertex"/>'s output for <paramref name="requester"/> at <paramref name="point"/>, unless it already did.</summary>
    private void Restart(Vertex vertex, ResumePoint point, Coordinate requester, byte knownEpoch)
    {
        if (vertex.LastResumePoint is { } last && vertex.LastResumeRequester == requester)
        {
            if (vertex.LastResumeEpoch == knownEpoch && last.SameAs(point))
            {
                return; // the same request again (a retry): it is being answered
            }
            if (knownEpoch < vertex.LastResumeEpoch && ShuffleWire.Generation(knownEpoch) == ShuffleWire.Generation(vertex.LastResumeEpoch))
            {
                // A parent's every new request names a later epoch: this one was overtaken by one already answered (it
                // came late, over a longer route). Answering it would start a stream the parent no longer takes.
                Transport.Counters.StaleResumes++;
                return;
            }
        }
        vertex.LastResumePoint = point;
        vertex.LastResumeRequester = requester;
        vertex.LastResumeEpoch = knownEpoch;
        var output = vertex.Output;
        byte epoch = (byte)(Math.Max(output.Epoch, knownEpoch) + 1);
        if (ShuffleWire.Generation(epoch) != ShuffleWire.Generation(output.Epoch))
        {
            _service.FailJob(this, $"stream {output.Id.ReduceTask}/{output.Id.Tree}/{output.Id.Child.Name} restarted 16 times");
            return;
        }
        output.Destination = Placement.VertexId(requester);
        vertex.OutputHost = Placement.Torus.IndexOf(requester);
        Transport.Move(output, FirstHop(vertex.OutputHost, output.Port));
        long kept = Transport.Counters.RestartsFromKept;
        if (vertex.Restart(point, epoch))
        {
            _unfinishedVertices++;
        }
        Log($"stream {output.Id.ReduceTask}/{output.Id.Tree}/{output.Id.Child.Name}/{output.Id.Source} restarts for {requester.Name} as epoch {epoch} "
            + (Transport.Counters.RestartsFromKept > kept ? "from the bytes it kept" : "regenerated") + (point.HasKey ? "" : " from the start"));
        _service.OnJobProgress(this);
    }

    /// <summary>Asks the owner of <paramref name="child"/>'s sender to restart it at its pending point (and again until it does).</summary>
    internal void RequestResume(VertexBase parent, InboundStream child)
    {
        var point = child.PendingResume;
        if (point is null || Failure is not null)
        {
            return;
        }
        int target = OwnerIndex(OwnerKeyOf(child));
        if (target < 0)
        {
            return;
        }
        if (child.ResumeAttempts == 0)
        {
            _resuming.Add((parent, child));
        }
        child.ResumeTarget = target;
        child.ResumeSentAt = Transport.Context.Now;
        child.ResumeAttempts++;
        if (child.ResumeAttempts == 1 || child.ResumeAttempts % 4 == 0)
        {
            Log($"asks {Placement.Torus.CoordinateOf(target).Name} to restart stream {child.ReduceTask}/{child.Tree}/{child.Child.Name}/{child.Source} (attempt {child.ResumeAttempts})");
        }
        var request = new ResumeRequest(child.Id, Self, child.RequestEpoch, point.HasKey, point.Key, point.Skip);
        SendControl(Placement.VertexId(Placement.Torus.CoordinateOf(target)), request);
        ArmResumeTimer();
    }

    private void SendControl(Key destination, in ResumeRequest request)
    {
        int keyLength = request.HasKey ? request.Key.Length : 0;
        if (keyLength > ShuffleWire.MaxResumeKeyBytes)
        {
            // Asking again would never get through: the job fails with the reason instead of waiting forever.
            var s = request.Stream;
            _service.FailJob(this, $"stream {s.ReduceTask}/{s.Tree}/{s.Child.Name} cannot resume after a {keyLength}-byte key: a restart request carries keys of at most {ShuffleWire.MaxResumeKeyBytes} bytes");
            return;
        }
        var entry = new byte[ShuffleWire.ResumeEntrySize(keyLength)];
        ShuffleWire.WriteResume(entry, request);
        Transport.QueueControl(JobId, destination, entry);
    }

    private void Log(string message) => Transport.Context.Log(LogLevel.Info, $"job {JobId:x16}: {message}");

    /// <summary>The restart a parent asked for began: acks now go to the server its segments come from.</summary>
    internal void OnChildRestarted(InboundStream child, Coordinate sender)
    {
        int host = Placement.Torus.IndexOf(sender);
        child.ChildHost = host;
        child.ChildVertexId = Placement.VertexId(sender);
        child.ResumeTarget = -1;
        Transport.Move(child, FirstHop(host, child.Port));
    }

    private void ArmResumeTimer()
    {
        if (_resumeTimerArmed)
        {
            return;
        }
        _resumeTimerArmed = true;
        Transport.Context.SetTimer(ResumeRetryInterval, OnResumeTimer);
    }

    /// <summary>How long a parent waits for a restart before asking again (doubling per attempt, up to 8 times this).</summary>
    private long ResumeRetryInterval => Math.Max(4 * Options.Shuffle.MinRetransmitTimeout, 20 * NodeOptions.Millisecond);

    private void OnResumeTimer()
    {
        _resumeTimerArmed = false;
        if (Failure is not null)
        {
            return;
        }
        long now = Transport.Context.Now;
        int kept = 0;
        for (int i = 0; i < _resuming.Count; i++)
        {
            var (parent, child) = _resuming[i];
            if (child.PendingResume is null || !IsHosted(parent))
            {
                child.ResumeAttempts = 0;
                continue;
            }
            long wait = ResumeRetryInterval << Math.Min(child.ResumeAttempts - 1, 3);
            if (now - child.ResumeSentAt >= wait)
            {
                RequestResume(parent, child);
            }
            _resuming[kept++] = (parent, child);
        }
        _resuming.RemoveRange(kept, _resuming.Count - kept);
        if (_resuming.Count > 0)
        {
            ArmResumeTimer();
        }
        _service.FlushAfterRecovery();
    }

    private bool IsHosted(VertexBase vertex) => vertex switch
    {
        RootReducer root => _roots.GetValueOrDefault(root.ReduceTask) == root,
        Vertex v when v.Home == Self => true,
        Vertex v => _adopted.GetValueOrDefault((v.ReduceTask, v.Tree, Placement.Torus.IndexOf(v.Home))) == v,
        _ => false,
    };

    /// <summary>Takes over vertex (<paramref name="reduceTask"/>, <paramref name="tree"/>) of failed server <paramref name="home"/>.</summary>
    private Vertex AdoptVertex(int reduceTask, int tree, Coordinate home)
    {
        var torus = Placement.Torus;
        var root = RootOf(reduceTask);
        byte epoch = ShuffleWire.FirstEpoch(GenerationOf(reduceTask));
        var children = new List<InboundStream>();
        Span<Port> ports = stackalloc Port[Ports.Count];
        int count = Placement.Trees.GetChildPorts(root, home, tree, ports);
        for (int i = 0; i < count; i++)
        {
            AddAdoptedChild(children, reduceTask, tree, torus.Neighbour(home, ports[i]), 0, epoch);
        }
        int mapTasks = MapTasks.MapTasksOf(home).Count;
        for (int j = 1; j <= mapTasks; j++)
        {
            AddAdoptedChild(children, reduceTask, tree, home, (byte)j, epoch);
        }
        var parentPort = Placement.Trees.ParentPort(root, home, tree)!.Value;
        var output = new OutboundStream(JobId, reduceTask, tree, home, Placement.VertexId(Self), parentPort, Options.Shuffle.InitialWindowBytes,
            Options.Shuffle.MaxWindowBytes, Transport.Buffers, epoch: epoch);
        output.Suspend();
        output.SetRetention(RetentionBytes);
        var vertex = new Vertex(this, reduceTask, tree, home, [.. children], [], VertexMode, output);
        _adopted[(reduceTask, tree, torus.IndexOf(home))] = vertex;
        Log($"takes over vertex {reduceTask}/{tree} of failed server {home.Name}");
        _unfinishedVertices++;
        Transport.Register(output);
        Transport.Counters.VerticesAdopted++;
        _service.OnJobProgress(this);
        return vertex;
    }

    private void AddAdoptedChild(List<InboundStream> children, int reduceTask, int tree, Coordinate child, byte source, byte epoch)
    {
        var stream = new InboundStream(JobId, reduceTask, tree, child, Placement.VertexId(child), Port.XPlus, children.Count, source, epoch);
        stream.TrackRecords();
        children.Add(stream);
        InboundStreams++;
    }

    /// <summary>
    /// Reduce task <paramref name="reduceTask"/>'s root failed before it finished: the task starts over as its next
    /// generation, rooted at <see cref="JobPlacement.NextRoot"/>. Every server drops its part of the task and builds it
    /// anew on the new trees, from the first record of every map output: all that the failed reducer held is lost
    /// with it, so nothing it wrote is counted, and nothing of the new generation before its start either.
    /// </summary>
    private void Reroot(int reduceTask)
    {
        var failed = RootOf(reduceTask);
        if (_generation[reduceTask] == 15)
        {
            _service.FailJob(this, $"reduce task {reduceTask} lost its root 16 times");
            return;
        }
        _generation[reduceTask]++;
        _rootOf[reduceTask] = Placement.NextRoot(reduceTask, _generation[reduceTask], failed, _view);
        PrepareToContinue(reduceTask, failed);
        var sent = new long[TreeTopology.TreeCount];
        for (int t = 0; t < TreeTopology.TreeCount; t++)
        {
            sent[t] = Vertex(reduceTask, t)?.Output.SentHigh ?? 0;
        }
        TearDown(reduceTask);
        BuildReduceTask(reduceTask);
        // With replicated output the new root may go on from its replica and ask every stream for the records after a
        // key far ahead: windows stay at their initial two segments until then, so that little is sent from the start
        // in vain.
        bool advertise = !Description.ReplicateOutput;
        for (int t = 0; t < TreeTopology.TreeCount; t++)
        {
            if (Vertex(reduceTask, t) is { } vertex)
            {
                vertex.Output.CountAsResent(sent[t]);
                Transport.Register(vertex.Output);
                StartVertex(vertex, advertise);
            }
        }
        if (_replicas.TryGetValue(reduceTask, out var replica))
        {
            StartVertex(replica);
        }
        if (_roots.TryGetValue(reduceTask, out var root))
        {
            StartVertex(root, advertise);
            StartReplicating(root);
            Transport.Counters.VerticesAdopted++;
            Log($"reduce task {reduceTask} starts over here: its root {failed.Name} failed");
        }
    }

    /// <summary>Drops this server's part of reduce task <paramref name="reduceTask"/>: vertices, root reducer, leaves of map tasks run again.</summary>
    private void TearDown(int reduceTask)
    {
        for (int t = 0; t < TreeTopology.TreeCount; t++)
        {
            ref var vertex = ref _vertices[(reduceTask * TreeTopology.TreeCount) + t];
            if (vertex is not null)
            {
                Drop(vertex);
                vertex = null;
            }
        }
        if (_roots.Remove(reduceTask, out var root))
        {
            Drop(root);
            root.Output.Dispose();
            if (root.StopReplicating() is { } stream)
            {
                Transport.Forget(stream);
            }
        }
        if (_replicas.Remove(reduceTask, out var replica))
        {
            DropReplica(replica);
        }
        foreach (var (key, adopted) in _adopted.Where(a => a.Key.R == reduceTask).ToList())
        {
            _adopted.Remove(key);
            Drop(adopted);
        }
        foreach (var rerun in _reruns.Values)
        {
            foreach (var leaf in rerun.RemoveLeaves(reduceTask))
            {
                Drop(leaf);
            }
        }
        // Requests of the generation being built stay: they came from servers that started it over first.
        int generation = _generation[reduceTask];
        foreach (var (id, _) in _deferred.Where(d => d.Key.ReduceTask == reduceTask && ShuffleWire.Generation(d.Value.Epoch) < generation).ToList())
        {
            _deferred.Remove(id);
        }
    }

    /// <summary>Forgets one vertex: its merger, stashes and streams go back, its job no longer waits for it.</summary>
    private void Drop(VertexBase vertex)
    {
        vertex.Discard();
        foreach (var child in vertex.Children)
        {
            Transport.Forget(child);
            InboundStreams--;
        }
        if (vertex is Vertex v)
        {
            if (!v.IsFinished)
            {
                _unfinishedVertices--;
            }
            Transport.Forget(v.Output);
        }
    }

    private void DropAdopted((int R, int Tree, int Home) key, Vertex vertex)
    {
        _adopted.Remove(key);
        Drop(vertex);
    }

    /// <summary>The re-run of map task <paramref name="source"/> of <paramref name="server"/> here, started if it was not.</summary>
    private RerunMapTask EnsureRerun(Coordinate server, byte source)
    {
        var key = (Placement.Torus.IndexOf(server), (int)source);
        if (_reruns.TryGetValue(key, out var rerun))
        {
            return rerun;
        }
        var id = MapTasks.MapTasksOf(server)[source - 1];
        rerun = new RerunMapTask(this, server, source);
        _reruns[key] = rerun;
        Transport.Counters.MapTasksRerun++;
        Log($"runs map task {source} of failed server {server.Name} again");
        MapTasks.Rerun(id, server, (output, error) => OnRerunDone(rerun, output, error));
        return rerun;
    }

    private void OnRerunDone(RerunMapTask rerun, MapOutput? output, string? error)
    {
        if (Failure is not null)
        {
            output?.Dispose();
            return;
        }
        if (output is null)
        {
            _service.FailJob(this, $"map task {rerun.Source} of failed server {rerun.Server.Name} could not run again here: {error}");
            return;
        }
        rerun.Output = output;
        foreach (var ((r, t), (point, requester, epoch)) in rerun.Waiting)
        {
            Restart(rerun.Leaf(r, t, create: true)!, point, requester, epoch);
        }
        rerun.Waiting.Clear();
        _service.FlushAfterRecovery();
    }

    /// <summary>
    /// A map task of a failed server, run again here: one leaf per (reduce task, stripe) that a parent asks for, each
    /// sending its run from the parent's resume point.
    /// </summary>
    private sealed class RerunMapTask(ServerJob job, Coordinate server, byte source)
    {
        private readonly Dictionary<(int R, int Tree), Vertex> _leaves = [];

        public Coordinate Server { get; } = server;

        public byte Source { get; } = source;

        public MapOutput? Output { get; set; }

        /// <summary>Restart requests that came before the map output was ready.</summary>
        public Dictionary<(int R, int Tree), (ResumePoint Point, Coordinate Requester, byte Epoch)> Waiting { get; } = [];

        public IEnumerable<Vertex> Leaves => _leaves.Values;

        /// <summary>Takes out the leaves of one reduce task (it starts over on new trees).</summary>
        public List<Vertex> RemoveLeaves(int reduceTask)
        {
            var removed = _leaves.Where(l => l.Key.R == reduceTask).ToList();
            foreach (var (key, _) in removed)
            {
                _leaves.Remove(key);
            }
            foreach (var key in Waiting.Keys.Where(k => k.R == reduceTask).ToList())
            {
                Waiting.Remove(key);
            }
            return removed.Select(l => l.Value).ToList();
        }

        public Vertex? Leaf(int reduceTask, int tree, bool create = false)
        {
            if (_leaves.TryGetValue((reduceTask, tree), out var leaf) || !create || Output is null)
            {
                return leaf;
            }
            var run = new LocalRun(Output, reduceTask, tree);
            var output = new OutboundStream(job.JobId, reduceTask, tree, Server, job.Placement.VertexId(job.Self), Port.XPlus,
                job.Options.Shuffle.InitialWindowBytes, job.Options.Shuffle.MaxWindowBytes, job.Transport.Buffers, Source,
                ShuffleWire.FirstEpoch(job.GenerationOf(reduceTask)));
            output.Suspend();
            leaf = new Vertex(job, reduceTask, tree, Server, [], run.IsEmpty ? [] : [run], job.VertexMode, output);
            _leaves[(reduceTask, tree)] = leaf;
            job._unfinishedVertices++;
            job.Transport.Register(output);
            return leaf;
        }
    }
}
