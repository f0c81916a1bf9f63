using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Service;
using Camdoop.MapReduce.Shuffle;

namespace Camdoop.MapReduce.Vertices;

/// <summary>
/// The reduce task at its root server (paper §4.1, §4.3): merges the six tree streams (the root's child in each
/// tree) with every local map output of partition r (all six stripes), applies the final reduce, and writes the
/// output while the shuffle is still running: as soon as it holds data from every unfinished input.
/// </summary>
public sealed class RootReducer : VertexBase
{
    private const int ChunkBytes = 64 * 1024;

    private readonly ReduceOutput _output;
    private byte[]? _chunk;

    public RootReducer(ServerJob owner, int reduceTask, InboundStream[] children, LocalRun[] locals, ReduceOutput output)
        : base(owner, reduceTask, children, locals, MergeMode.Reduce)
    {
        _output = output;
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
        var merger = EnsureMerger();
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
