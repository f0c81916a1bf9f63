using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// The reduce task at its root server (the Camdoop paper, §4.1, §4.3): merges the six tree streams (the root's child in each
/// tree) with every local map output of partition r (all six stripes), applies the final reduce, and writes the
/// output while the shuffle is still running: as soon as it holds data from every unfinished input. For a job whose
/// reduce only passes the folded value on (<see cref="Jobs.IMapReduceJob.ReduceIsIdentity"/>) it merges in Combine
/// mode, whose output is the same record stream, on the merger's fast paths (on 8x8x8 R = 1 the root's reduce calls
/// were a third of its work).
/// <para>
/// A reduce task whose root's server fails starts over, as its next generation, on new trees rooted elsewhere (see
/// <see cref="ServerJob.RootOf"/>): the failed reducer's output is lost with it (the Camdoop paper, §4.2), unless the job
/// replicates its output (<see cref="Jobs.Control.JobDescription.ReplicateOutput"/>): then the reducer streams every
/// byte it writes to an <see cref="OutputReplica"/> on the server the task would start over on, and cannot write
/// faster than that stream takes it; the new reducer goes on from the replica (<see cref="ResumeFrom"/>).
/// </para>
/// </summary>
public sealed class RootReducer : VertexBase
{
    private const int ChunkBytes = 64 * 1024;

    private const int LocalBlockBytes = 16 * 1024;

    private readonly ReduceOutput _output;
    private byte[]? _chunk;
    private ResumePoint? _resumeFrom;

    // The local runs (six stripes per local map task) are merged first into one input of the reducer: with six
    // children that keeps the reducer at seven inputs, inside the merger's eight-lane fast path.
    private StreamMerger? _localMerger;
    private bool _localDone;
    private long _localCharged;

    public RootReducer(ServerJob owner, int reduceTask, Coordinate home, InboundStream[] children, LocalRun[] locals, ReduceOutput output)
        : base(owner, reduceTask, JobPlacement.RootTree, home, children, locals, ModeFor(owner.Job))
    {
        _output = output;
    }

    private static MergeMode ModeFor(Jobs.IMapReduceJob job) =>
        job.IsAssociativeCommutative && job.ReduceIsIdentity ? MergeMode.Combine : MergeMode.Reduce;

    protected override ComputeWork Work => ComputeWork.Reduce;

    protected override int MergerInputs => Children.Count + (Locals.Count > 0 ? 1 : 0);

    protected override bool FeedLocals()
    {
        if (Locals.Count == 0 || _localDone)
        {
            return false;
        }
        var merger = Merger!;
        int input = Children.Count;
        bool changed = false;
        while (merger.NeedsData(input))
        {
            if (_localMerger is null)
            {
                _localMerger = new StreamMerger(Owner.Job, Locals.Count,
                    Owner.Job.IsAssociativeCommutative ? MergeMode.Combine : MergeMode.Merge, Owner.MergerInitialInputBytes);
                _localCharged = 0;
            }
            var local = _localMerger;
            for (int i = 0; i < Locals.Count; i++)
            {
                if (local.NeedsData(i) && Locals[i].TryLendTo(local, i))
                {
                    // An in-memory run is read where it lies.
                    CountLocalBytes(Locals[i].Length);
                    continue;
                }
                while (local.NeedsData(i))
                {
                    int fed = Locals[i].Feed(local, i, Owner.Options.LocalBlockBytes);
                    CountLocalBytes(fed);
                }
            }
            // Straight into the reducer's input buffer, with no block in between.
            var status = local.Drain(merger.AppendSpace(input, LocalBlockBytes), out int written);
            // Merging the local runs into one input is a vertex's kind of work; the reduce comes after.
            DeclareWork(local, ref _localCharged, ComputeWork.Merge);
            merger.CommitAppend(input, written);
            changed = true;
            if (status == DrainStatus.Completed)
            {
                merger.Finish(input);
                _localMerger = null;
                _localDone = true;
                break;
            }
        }
        return changed;
    }

    public ReduceOutput Output => _output;

    /// <summary>The stream to the output's replica, or null when the job does not replicate it (or it was lost).</summary>
    public OutboundStream? Replica { get; private set; }

    /// <summary>The server holding the replica (-1: none).</summary>
    internal int ReplicaHost { get; private set; } = -1;

    /// <summary>From now on every output byte also goes to <paramref name="stream"/>, to server <paramref name="host"/>.</summary>
    internal void ReplicateTo(OutboundStream stream, int host)
    {
        Replica = stream;
        ReplicaHost = host;
    }

    /// <summary>The replica's server was lost: the reducer goes on alone.</summary>
    internal OutboundStream? StopReplicating()
    {
        var stream = Replica;
        Replica = null;
        ReplicaHost = -1;
        Owner.MarkDirty(this);
        return stream;
    }

    /// <summary>
    /// This reducer continues the output of a failed one from its replica: it takes only the records after
    /// <paramref name="point"/> from its children and local runs.
    /// </summary>
    internal void ResumeFrom(ResumePoint point) => _resumeFrom = point;

    /// <summary>Whether this reducer went on from a replica (its output has a part no replica stream carried).</summary>
    internal bool ContinuesReplica => _resumeFrom is not null;

    /// <summary>Virtual time (ns) at which the last output byte was written; -1 while running.</summary>
    public long CompletedAt { get; private set; } = -1;

    public override void Start()
    {
        if (_resumeFrom is { HasKey: true } point)
        {
            AskFrom(point);
        }
        Owner.MarkDirty(this);
    }

    public override void Pump()
    {
        if (IsFinished)
        {
            return;
        }
        if (MergerInputs == 0)
        {
            Complete();
            return;
        }
        var merger = TryMerger();
        if (merger is null)
        {
            UpdateWindows();
            return;
        }
        _chunk ??= new byte[ChunkBytes];
        FeedLocals();
        while (true)
        {
            var replica = Replica;
            var space = replica is null ? _chunk : replica.DrainSpace();
            if (space.IsEmpty)
            {
                break; // the replica's window is full: its acks pump again
            }
            var status = merger.Drain(space, out int written);
            DeclareMergeWork();
            _output.Write(space[..written]);
            if (replica is not null)
            {
                replica.CommitDrained(written);
                Owner.Transport.MarkReady(replica);
            }
            if (status == DrainStatus.Completed)
            {
                ReleaseMerger();
                _chunk = null;
                replica?.EndSource();
                Complete();
                return;
            }
            if (status == DrainStatus.NeedsInput && !FeedLocals())
            {
                break;
            }
        }
        UpdateWindows();
    }

    /// <summary>Asks every child for its records after <paramref name="point"/> and moves every local run there.</summary>
    private void AskFrom(ResumePoint point)
    {
        var transport = Owner.Transport;
        foreach (var child in Children)
        {
            child.Restart(point, transport.Buffers);
            Owner.RequestResume(this, child);
        }
        foreach (var local in Locals)
        {
            local.SeekAfter(point, Owner.Job.KeyComparer);
        }
    }

    private void Complete()
    {
        _output.Complete();
        IsFinished = true;
        CompletedAt = Owner.Transport.Context.Now;
        Owner.OnReduceTaskCompleted(this);
    }
}
