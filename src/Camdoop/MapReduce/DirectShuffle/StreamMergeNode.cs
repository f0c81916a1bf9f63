using Camdoop.MapReduce.Merge;
using Camdoop.Runtime.Node;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// One node's merge of a reduce task's streams in a stream shuffle: one merger input per child stream (taken in the
/// order the streams come; a child is a (sender, tree) pair) and, on a server, one for its own local runs. What
/// the merge produces goes to the reduce output (<see cref="DirectReducer"/>) or to the parent
/// (<see cref="ForwardingVertex"/>).
/// </summary>
internal abstract class StreamMergeNode
{
    private readonly LocalRunMerge? _local;
    private readonly int _localInput;
    private readonly HashSet<(int Sender, int Tree)> _attached = [];
    private readonly int _streams;
    private readonly int _blockBytes;
    private long _localCharged;

    protected StreamMergeNode(DirectJob owner, int reduceTask, int streams, LocalRunMerge? local, MergeMode mode, int inputBytes, int blockBytes)
    {
        Owner = owner;
        ReduceTask = reduceTask;
        _streams = streams;
        _local = local;
        _blockBytes = blockBytes;
        _localInput = local is null ? -1 : streams;
        Merger = new StreamMerger(owner.Job, streams + (local is null ? 0 : 1), mode, inputBytes);
    }

    public int ReduceTask { get; }

    /// <summary>Bytes the merge took in: every child stream's records and the local runs.</summary>
    public long InputBytes => Merger.InputBytes;

    /// <summary>Bytes the merge produced (after combining, when the job allows it).</summary>
    public long OutputBytes => Merger.OutputBytes;

    protected DirectJob Owner { get; }

    protected StreamMerger Merger { get; }

    /// <summary>Takes the stream of <paramref name="sender"/>'s <paramref name="tree"/>: its merger input, or -1 (a second one, or one too many).</summary>
    public int Attach(int sender, int tree)
    {
        if (_attached.Count == _streams || !_attached.Add((sender, tree)))
        {
            return -1;
        }
        return _attached.Count - 1;
    }

    public void OnData(int input, ReadOnlySpan<byte> data)
    {
        Merger.Append(input, data);
        Pump();
    }

    public void OnEnd(int input)
    {
        Merger.Finish(input);
        Pump();
    }

    /// <summary>Merges what the inputs allow and passes it on.</summary>
    public abstract void Pump();

    /// <summary>Feeds the local input if the merger waits for it; whether anything changed.</summary>
    protected bool FeedLocal()
    {
        var local = _local;
        if (local is null || (local.IsCompleted && Merger.IsFinished(_localInput)))
        {
            return false;
        }
        bool changed = false;
        while (Merger.NeedsData(_localInput) && !local.IsCompleted)
        {
            int written = local.Drain(Merger.AppendSpace(_localInput, _blockBytes));
            Merger.CommitAppend(_localInput, written);
            Owner.Declare(ComputeWork.Merge, local.ConsumedBytes, ref _localCharged);
            changed = true;
        }
        if (local.IsCompleted && !Merger.IsFinished(_localInput))
        {
            Merger.Finish(_localInput);
            changed = true;
        }
        return changed;
    }
}
