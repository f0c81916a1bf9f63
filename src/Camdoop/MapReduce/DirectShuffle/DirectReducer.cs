using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Node;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// A reduce task of a stream shuffle at its server (the root): one merger input per child stream of every tree (the
/// other servers' streams in the direct shuffle) and this server's local runs merged into one input, reduced and
/// written as the streams arrive, as a root reducer does with its six tree streams.
/// </summary>
internal sealed class DirectReducer : StreamMergeNode
{
    private const int ChunkBytes = 64 * 1024;

    private byte[]? _chunk = new byte[ChunkBytes];
    private long _charged;

    public DirectReducer(DirectJob owner, int reduceTask, int streams, LocalRunMerge local, ReduceOutput output, int inputBytes, int blockBytes)
        : base(owner, reduceTask, streams, local, ModeFor(owner), inputBytes, blockBytes)
    {
        Output = output;
    }

    public ReduceOutput Output { get; }

    public bool IsFinished { get; private set; }

    /// <summary>Virtual time (ns) at which the last output byte was written; -1 while running.</summary>
    public long CompletedAt { get; private set; } = -1;

    public override void Pump()
    {
        if (IsFinished)
        {
            return;
        }
        FeedLocal();
        var chunk = _chunk!;
        while (true)
        {
            var status = Merger.Drain(chunk, out int written);
            Owner.Declare(ComputeWork.Reduce, Merger.ConsumedBytes, ref _charged);
            Output.Write(chunk.AsSpan(0, written));
            if (status == DrainStatus.Completed)
            {
                Complete();
                return;
            }
            if (status == DrainStatus.NeedsInput && !FeedLocal())
            {
                return;
            }
        }
    }

    // As a root reducer: a job whose reduce only passes the folded value on is combined, on the merger's fast paths.
    private static MergeMode ModeFor(DirectJob owner) =>
        owner.Job.IsAssociativeCommutative && owner.Job.ReduceIsIdentity ? MergeMode.Combine : MergeMode.Reduce;

    private void Complete()
    {
        Merger.ReleaseBuffers();
        _chunk = null;
        Output.Complete();
        IsFinished = true;
        CompletedAt = Owner.Now;
        Owner.OnReducerCompleted(this);
    }
}
