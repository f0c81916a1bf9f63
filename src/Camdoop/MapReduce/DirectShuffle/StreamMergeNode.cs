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
    private readonly Dictionary<(int Sender, int Tree), int> _attached = [];
    private readonly List<ReplacedInput> _replaced = [];
    private readonly int _streams;
    private readonly HashSet<int> _cut = [];

    // Inputs of resent streams are numbered past the merger's: ReplacedBase + replacement * ReplacedStride + slot.
    private const int ReplacedBase = 1 << 24;
    private const int ReplacedStride = 1 << 16;
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

    /// <summary>Which children may send now; null when they all push at once.</summary>
    public Admission? Admission { get; set; }

    protected StreamMerger Merger { get; }

    /// <summary>Takes the stream of <paramref name="sender"/>'s <paramref name="tree"/>: its merger input, or -1 (a second one, or one too many).</summary>
    public int Attach(int sender, int tree)
    {
        if (Abandoned)
        {
            return -1;
        }
        for (int i = 0; i < _replaced.Count; i++)
        {
            if (_replaced[i].Tree == tree && _replaced[i].Attach(sender) is int slot and >= 0)
            {
                return ReplacedBase + (i * ReplacedStride) + slot;
            }
        }
        if (_attached.Count == _streams || _attached.ContainsKey((sender, tree)))
        {
            return -1;
        }
        int input = _attached.Count;
        _attached.Add((sender, tree), input);
        return input;
    }

    public void OnData(int input, ReadOnlySpan<byte> data)
    {
        if (Abandoned)
        {
            return;
        }
        if (input >= ReplacedBase)
        {
            var replaced = _replaced[(input - ReplacedBase) / ReplacedStride];
            replaced.OnData((input - ReplacedBase) % ReplacedStride, data);
            replaced.Feed(Merger);
        }
        else if (!_cut.Contains(input))
        {
            Merger.Append(input, data);
        }
        Pump();
    }

    public void OnEnd(int input)
    {
        if (Abandoned)
        {
            return;
        }
        if (input >= ReplacedBase)
        {
            var replaced = _replaced[(input - ReplacedBase) / ReplacedStride];
            replaced.OnEnd((input - ReplacedBase) % ReplacedStride);
            replaced.Feed(Merger);
        }
        else if (!_cut.Contains(input))
        {
            Merger.Finish(input);
        }
        Pump();
    }

    /// <summary>Set when this node's stream was restarted elsewhere: what still comes for it is ignored.</summary>
    public bool Abandoned { get; private set; }

    /// <summary>Records dropped from resent streams as already merged from a failed child.</summary>
    public long DroppedRecords => _replaced.Sum(r => r.DroppedRecords);

    /// <summary>
    /// <paramref name="child"/>'s stream of <paramref name="tree"/> is cut where this node's merge last took a key
    /// from it (its bytes after that, and whatever still comes on it, are discarded) and goes on from the resent
    /// streams of the failed child's own children, <paramref name="grandchildren"/>, past that key.
    /// </summary>
    public void Cut(int child, int tree, IReadOnlyCollection<int> grandchildren)
    {
        if (Abandoned || _cut.Contains(_attached.GetValueOrDefault((child, tree), -1)))
        {
            return;
        }
        byte[]? cut = null;
        bool dropsAll = false;
        if (!_attached.TryGetValue((child, tree), out int input))
        {
            input = Attach(child, tree); // nothing came from it yet: its slot takes the resent streams whole
            if (input < 0)
            {
                return;
            }
        }
        else if (Merger.IsFinished(input))
        {
            dropsAll = true; // it had ended and every byte had come: the resent streams carry nothing new
        }
        else
        {
            if (Merger.HasConsumed(input))
            {
                cut = Merger.LastConsumedKey(input).ToArray();
            }
            Merger.ResetInput(input);
        }
        _cut.Add(input);
        _replaced.Add(new ReplacedInput(Owner.Job, tree, input, cut, dropsAll, grandchildren));
        _replaced[^1].Feed(Merger);
        Pump();
    }

    /// <summary>This node's stream is restarted by a new one: stop taking data and let the merger's buffers go.</summary>
    public virtual void Abandon()
    {
        Abandoned = true;
        Merger.ReleaseBuffers();
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
