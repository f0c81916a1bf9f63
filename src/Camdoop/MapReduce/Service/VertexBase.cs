using Camdoop.KeyRouting;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// What an on-path vertex and a root reducer share (the Camdoop paper, §4.1): inputs from child vertices (network streams) and
/// from local map tasks (in memory), merged by a <see cref="StreamMerger"/> that emits as soon as it holds data
/// from every unfinished input. Nothing can be emitted before every child has sent something, so until then the
/// children's bytes wait in small pooled stashes and the vertex holds no merger; it takes one from its job's pool
/// then and gives it back when its output is complete. With R = N a server hosts thousands of vertices, but only
/// those whose children are all streaming hold a merger (a few thousand at once on 8x8x8, not a million).
/// Receive windows follow what has been consumed.
/// <para>
/// A vertex belongs to a place in a tree: reduce task, tree and the server it sits on in the tree (its
/// <see cref="Home"/>). After its home fails it lives on another server (adopted), which its own key
/// (<see cref="OwnerKey"/>) decides: every server with the same view of failures agrees where (the Camdoop paper, §4.2).
/// </para>
/// </summary>
public abstract class VertexBase
{
    private readonly InboundStream[] _children;
    private readonly LocalRun[] _locals;
    private readonly MergeMode _mode;
    private StreamMerger? _merger;
    private long _mergerCharged;

    protected VertexBase(ServerJob owner, int reduceTask, int treeIndex, Coordinate home, InboundStream[] children, LocalRun[] locals, MergeMode mode)
    {
        Owner = owner;
        ReduceTask = reduceTask;
        TreeIndex = treeIndex;
        Home = home;
        _children = children;
        _locals = locals;
        _mode = mode;
    }

    public ServerJob Owner { get; }

    public int ReduceTask { get; }

    /// <summary>The tree (0 to 5) of a vertex, <see cref="JobPlacement.RootTree"/> for a root reducer.</summary>
    public int TreeIndex { get; }

    /// <summary>The server this vertex sits on in the trees (where it runs unless that server failed).</summary>
    public Coordinate Home { get; }

    /// <summary>Where the vertex lives after a failure: the server that owns this key in the job's view.</summary>
    public Key OwnerKey => Owner.Placement.VertexKey(Home, ReduceTask, TreeIndex, Owner.RootOf(ReduceTask));

    /// <summary>Whether this vertex runs here in place of its failed home server.</summary>
    public bool IsAdopted => Home != Owner.Self;

    public IReadOnlyList<InboundStream> Children => _children;

    protected IReadOnlyList<LocalRun> Locals => _locals;

    /// <summary>Bytes that entered this vertex: from children and local map outputs (the paper's "aggregated bytes").</summary>
    public long AggregatedBytes { get; protected set; }

    /// <summary>The vertex has done all its work (output complete and acknowledged, or written).</summary>
    public bool IsFinished { get; protected set; }

    internal bool IsDirty;

    /// <summary>What merging here costs a simulator that prices compute: a vertex merges, a root reduces.</summary>
    protected virtual ComputeWork Work => ComputeWork.Merge;

    protected StreamMerger? Merger => _merger;

    /// <summary>Inputs of the merger: one per child, then the local runs (or what stands for them).</summary>
    protected virtual int MergerInputs => _children.Length + _locals.Length;

    /// <summary>The child stream of tree <paramref name="tree"/> from vertex <paramref name="child"/>, or null.</summary>
    public InboundStream? FindChild(int tree, Coordinate child, byte source = 0)
    {
        foreach (var s in _children)
        {
            if (s.Tree == tree && s.Child == child && s.Source == source)
            {
                return s;
            }
        }
        return null;
    }

    /// <summary>
    /// The key of the last record merged from <paramref name="child"/> (empty before the first, or once the merger is
    /// released): failure recovery resumes the child's stream after it (the Camdoop paper, §4.2).
    /// </summary>
    public ReadOnlySpan<byte> LastKeyReceived(InboundStream child)
    {
        ArgumentNullException.ThrowIfNull(child);
        return _merger is null ? default : _merger.LastConsumedKey(child.InputIndex);
    }

    /// <summary>Handles a data segment of one of this vertex's children, sent by server <paramref name="sender"/>.</summary>
    public void OnSegment(InboundStream child, in DataSegment segment, Coordinate sender)
    {
        var transport = Owner.Transport;
        bool awaited = child.PendingResume is not null;
        var outcome = child.Receive(segment, transport.AckEveryBytes, out var fresh, out bool finished, out bool ackNow);
        var counters = transport.Counters;
        if (awaited && child.PendingResume is null)
        {
            // The restart began: acks go to the server it comes from.
            Owner.OnChildRestarted(child, sender);
        }
        switch (outcome)
        {
            case ReceiveOutcome.Accepted:
                AggregatedBytes += fresh.Length;
                counters.DataBytesReceived += fresh.Length;
                if (_merger is null)
                {
                    child.Stash(fresh, transport.Buffers);
                }
                else
                {
                    _merger.Append(child.InputIndex, fresh);
                    if (finished)
                    {
                        _merger.Finish(child.InputIndex);
                    }
                }
                Owner.MarkDirty(this);
                break;
            case ReceiveOutcome.Duplicate:
                counters.DuplicateSegments++;
                break;
            case ReceiveOutcome.Stale:
                counters.StaleEpoch++;
                return;
            default:
                counters.OutOfOrderSegments++;
                break;
        }
        if (ackNow)
        {
            transport.QueueAck(child);
        }
    }

    /// <summary>Moves data as far as it can go now: feed local runs, merge, emit.</summary>
    public abstract void Pump();

    /// <summary>Called once when the job starts on this server.</summary>
    public abstract void Start();

    /// <summary>
    /// The merger, taken from the job's pool (and fed the children's stashes) once every child has sent bytes or its
    /// FIN; null before.
    /// </summary>
    protected StreamMerger? TryMerger()
    {
        if (_merger is not null)
        {
            return _merger;
        }
        foreach (var child in _children)
        {
            if (child.Received == 0 && !child.FinReceived)
            {
                return null;
            }
        }
        if (MergerInputs == 0)
        {
            throw new InvalidOperationException("a vertex without inputs needs no merger");
        }
        var merger = Owner.RentMerger(MergerInputs, _mode);
        var pool = Owner.Transport.Buffers;
        int reserve = Owner.Transport.MergerInputReserveBytes;
        foreach (var child in _children)
        {
            // The stash becomes the input's buffer, uncopied, when no more bytes will follow or it is as large as the
            // reservation anyway (at R = N there is none); otherwise a window's buffer is reserved, so that the input
            // does not grow step by step, and the stash is copied into it.
            var stash = child.StashBuffer;
            if (stash is not null && (child.FinReceived || stash.Length >= reserve + StreamMerger.LendSlackBytes)
                && merger.TryAdopt(child.InputIndex, stash, child.Stashed.Length))
            {
                child.HandOverStash();
            }
            else
            {
                merger.Reserve(child.InputIndex, reserve);
                merger.Append(child.InputIndex, child.Stashed);
                child.ReleaseStash(pool);
            }
            if (child.FinReceived)
            {
                merger.Finish(child.InputIndex);
            }
        }
        _merger = merger;
        _mergerCharged = 0;
        return merger;
    }

    /// <summary>Feeds every local input the merger waits for; false when nothing changed.</summary>
    protected virtual bool FeedLocals()
    {
        var merger = _merger!;
        bool changed = false;
        // No larger than the merger's input buffers: a bigger block would grow them, and at R = N every vertex of a
        // server merges at once (4x4x4, R = 64: 47 KB per vertex with 16 KB blocks).
        int block = Math.Min(Owner.Options.LocalBlockBytes, Owner.MergerInitialInputBytes);
        for (int i = 0; i < _locals.Length; i++)
        {
            int input = _children.Length + i;
            if (merger.NeedsData(input) && _locals[i].TryLendTo(merger, input))
            {
                CountLocalBytes(_locals[i].Length);
                changed = true;
                continue;
            }
            while (merger.NeedsData(input))
            {
                int fed = _locals[i].Feed(merger, input, block);
                CountLocalBytes(fed);
                changed = true;
            }
        }
        return changed;
    }

    /// <summary>Counts bytes of a local map run handed to this vertex (fed, lent or sent as is).</summary>
    protected void CountLocalBytes(long bytes)
    {
        AggregatedBytes += bytes;
        Owner.Transport.Counters.LocalBytes += bytes;
    }

    /// <summary>
    /// Declares the input <paramref name="merger"/> read since the last call (<paramref name="charged"/> holds what was
    /// declared of it): work is priced as the merge does it, not when bytes arrive or a local run is lent whole, so a
    /// simulated server's core is busy in step with its merge. Called after every drain, before anything drained is sent.
    /// </summary>
    protected void DeclareWork(StreamMerger merger, ref long charged, ComputeWork kind)
    {
        long consumed = merger.ConsumedBytes;
        if (consumed > charged)
        {
            Owner.Transport.Context.Compute(kind, consumed - charged);
            charged = consumed;
        }
    }

    /// <summary><see cref="DeclareWork"/> for this vertex's own merger.</summary>
    protected void DeclareMergeWork()
    {
        if (_merger is not null)
        {
            DeclareWork(_merger, ref _mergerCharged, Work);
        }
    }

    /// <summary>Recomputes what each child's merger input has consumed and queues window updates worth sending.</summary>
    protected void UpdateWindows()
    {
        var transport = Owner.Transport;
        int window = transport.WindowBytes;
        foreach (var child in _children)
        {
            child.Consumed = child.Received - (_merger?.BufferedBytes(child.InputIndex) ?? child.Stashed.Length);
            if (child.WantsWindowUpdate(window))
            {
                transport.QueueAck(child);
            }
        }
    }

    /// <summary>
    /// Merges again from <paramref name="point"/> (failure recovery): drops the merger and what the children sent,
    /// asks every child to start again from the point's key (its records with that key included: the caller drops
    /// the ones its consumer holds), and moves every local run to the same key.
    /// </summary>
    protected void RestartInputs(ResumePoint point)
    {
        var transport = Owner.Transport;
        if (_merger is not null)
        {
            Owner.ReturnMerger(_merger);
            _merger = null;
        }
        var inner = point.WithoutSkip();
        foreach (var child in _children)
        {
            child.Restart(inner, transport.Buffers);
            Owner.RequestResume(this, child);
        }
        foreach (var local in _locals)
        {
            local.SeekAfter(inner, Owner.Job.KeyComparer);
        }
        transport.Counters.Regenerations++;
    }

    /// <summary>
    /// A child's server was lost: ask the child's new owner to start its stream again after the last complete record
    /// held (the Camdoop paper, §4.2). Nothing held is dropped; a record the failure cut comes again whole.
    /// </summary>
    internal void OnChildLost(InboundStream child)
    {
        ArgumentNullException.ThrowIfNull(child);
        var tail = child.Tail!;
        child.BeginResume(tail.Point, tail.CompleteEnd);
        Owner.RequestResume(this, child);
    }

    /// <summary>The vertex is dropped (its reduce task starts over): the merger goes back, local runs stop reading.</summary>
    internal void Discard()
    {
        if (_merger is not null)
        {
            Owner.ReturnMerger(_merger);
            _merger = null;
        }
        foreach (var local in _locals)
        {
            local.Close();
        }
        IsFinished = true;
    }

    /// <summary>Gives the merger back to the job's pool (every input consumed, everything emitted).</summary>
    protected void ReleaseMerger()
    {
        foreach (var child in _children)
        {
            child.Consumed = child.Received;
        }
        if (_merger is not null)
        {
            Owner.ReturnMerger(_merger);
        }
        _merger = null;
    }
}
