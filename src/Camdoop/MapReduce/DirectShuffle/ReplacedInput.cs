using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Merge;
using Camdoop.Records;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// What stands in for a failed child's stream at its parent: the failed node's own children resend their whole
/// streams here, merged (and combined, as the failed node would have) into one sorted stream, of which only the
/// records after the cut go on into the failed child's merger input. The cut is the last key the parent's merge took
/// from the failed child: once merged, a key is final (the child had every record of it), so those records are already
/// counted and are dropped from the resent streams; the bytes after the cut, a partial record included, were
/// discarded from the input. With <see cref="DropsAll"/> the failed child's stream had ended and been received whole:
/// the resent streams are read and dropped.
/// </summary>
internal sealed class ReplacedInput
{
    private const int ChunkBytes = 64 * 1024;

    private readonly IMapReduceJob _job;
    private readonly StreamMerger _merger;
    private readonly byte[]? _cut;
    private readonly HashSet<int> _senders;
    private readonly Dictionary<int, int> _slots = [];
    private readonly RecordStreamReader _reader = new();
    private byte[]? _chunk = new byte[ChunkBytes];
    private bool _passedCut;

    /// <param name="job">The job, for its key order and whether it combines.</param>
    /// <param name="tree">The tree of the failed child's stream.</param>
    /// <param name="input">The failed child's input in the parent's merger.</param>
    /// <param name="cut">The last key merged from the failed child, or null for none (nothing is dropped).</param>
    /// <param name="dropsAll">The failed child's stream had been received whole: drop everything resent.</param>
    /// <param name="senders">The failed node's children, whose streams come here instead.</param>
    public ReplacedInput(IMapReduceJob job, int tree, int input, byte[]? cut, bool dropsAll, IReadOnlyCollection<int> senders)
    {
        _job = job;
        Tree = tree;
        Input = input;
        _cut = cut;
        DropsAll = dropsAll;
        _senders = [.. senders];
        _passedCut = cut is null;
        _merger = new StreamMerger(job, Math.Max(1, senders.Count), job.IsAssociativeCommutative ? MergeMode.Combine : MergeMode.Merge);
        if (senders.Count == 0)
        {
            _merger.Finish(0);
        }
    }

    public int Tree { get; }

    /// <summary>The failed child's input in the parent's merger.</summary>
    public int Input { get; }

    public bool DropsAll { get; }

    /// <summary>Records of the resent streams dropped as already merged.</summary>
    public long DroppedRecords { get; private set; }

    public bool IsCompleted => _chunk is null;

    /// <summary>A slot for <paramref name="sender"/>'s resent stream, or -1 when it is not one of the failed node's children (or came twice).</summary>
    public int Attach(int sender)
    {
        if (!_senders.Contains(sender) || _slots.ContainsKey(sender))
        {
            return -1;
        }
        int slot = _slots.Count;
        _slots.Add(sender, slot);
        return slot;
    }

    public void OnData(int slot, ReadOnlySpan<byte> data) => _merger.Append(slot, data);

    public void OnEnd(int slot) => _merger.Finish(slot);

    /// <summary>Moves what the resent streams allow, past the cut, into the parent's input; finishes it at the end.</summary>
    public void Feed(StreamMerger parent)
    {
        var chunk = _chunk;
        if (chunk is null)
        {
            return;
        }
        while (true)
        {
            var status = _merger.Drain(chunk, out int written);
            if (!DropsAll)
            {
                Pass(chunk.AsSpan(0, written), parent);
            }
            if (status == DrainStatus.Completed)
            {
                _reader.Complete();
                _merger.ReleaseBuffers();
                _chunk = null;
                if (!DropsAll)
                {
                    parent.Finish(Input);
                }
                return;
            }
            if (status == DrainStatus.NeedsInput)
            {
                return;
            }
        }
    }

    private void Pass(ReadOnlySpan<byte> merged, StreamMerger parent)
    {
        if (_passedCut && _reader.BufferedBytes == 0)
        {
            parent.Append(Input, merged);
            return;
        }
        // Before the cut, record by record: drop the keys at or below it, pass the rest on as they were.
        _reader.Append(merged);
        while (_reader.TryRead(out var key, out var value))
        {
            if (!_passedCut && Compare(key, _cut) <= 0)
            {
                DroppedRecords++;
                continue;
            }
            _passedCut = true;
            int length = RecordCodec.EncodedLength(key.Length, value.Length);
            RecordCodec.Write(parent.AppendSpace(Input, length), key, value);
            parent.CommitAppend(Input, length);
        }
    }

    private int Compare(ReadOnlySpan<byte> key, ReadOnlySpan<byte> cut) =>
        _job.KeyComparer?.Compare(key, cut) ?? key.SequenceCompareTo(cut);
}
