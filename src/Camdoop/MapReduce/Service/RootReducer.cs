using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Shuffle;
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
/// <see cref="ServerJob.RootOf"/>): the failed reducer's output is lost with it (the Camdoop paper, §4.2).
/// </para>
/// </summary>
public sealed class RootReducer : VertexBase
{
    private const int ChunkBytes = 64 * 1024;

    private const int LocalBlockBytes = 16 * 1024;

    private readonly ReduceOutput _output;
    private byte[]? _chunk;

    // The local runs (six stripes per local map task) are merged first into one input of the reducer: with six
    // children that keeps the reducer at seven inputs, inside the merger's eight-lane fast path.
    private StreamMerger? _localMerger;
    private bool _localDone;

    public RootReducer(ServerJob owner, int reduceTask, Coordinate home, InboundStream[] children, LocalRun[] locals, ReduceOutput output)
        : base(owner, reduceTask, JobPlacement.RootTree, home, children, locals, ModeFor(owner.Job))
    {
        _output = output;
    }

    private static MergeMode ModeFor(Jobs.IMapReduceJob job) =>
        job.IsAssociativeCommutative && job.ReduceIsIdentity ? MergeMode.Combine : MergeMode.Reduce;

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
            var local = _localMerger ??= new StreamMerger(Owner.Job, Locals.Count,
                Owner.Job.IsAssociativeCommutative ? MergeMode.Combine : MergeMode.Merge, Owner.MergerInitialInputBytes);
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

    /// <summary>Virtual time (ns) at which the last output byte was written; -1 while running.</summary>
    public long CompletedAt { get; private set; } = -1;

    public override void Start() => Owner.MarkDirty(this);

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
            var status = merger.Drain(_chunk, out int written);
            _output.Write(_chunk.AsSpan(0, written));
            if (status == DrainStatus.Completed)
            {
                ReleaseMerger();
                _chunk = null;
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

    private void Complete()
    {
        _output.Complete();
        IsFinished = true;
        CompletedAt = Owner.Transport.Context.Now;
        Owner.OnReduceTaskCompleted(this);
    }
}
