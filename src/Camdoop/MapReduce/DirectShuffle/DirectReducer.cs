using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Node;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// A reduce task of the direct shuffle at its server: one merger input per server (the streams of the others, and
/// this server's local runs merged into one input), reduced and written as the streams arrive, as a root reducer
/// does with its six tree streams. All merging happens here; nothing was combined on the way.
/// </summary>
internal sealed class DirectReducer
{
    private const int ChunkBytes = 64 * 1024;

    private readonly DirectJob _owner;
    private readonly StreamMerger _merger;
    private readonly LocalRunMerge _local;
    private readonly int _localInput;
    private readonly bool[] _attached;
    private readonly int _blockBytes;
    private byte[]? _chunk = new byte[ChunkBytes];
    private long _charged;
    private long _localCharged;

    public DirectReducer(DirectJob owner, int reduceTask, int servers, int localInput, LocalRunMerge local, ReduceOutput output, int inputBytes, int blockBytes)
    {
        _owner = owner;
        ReduceTask = reduceTask;
        _localInput = localInput;
        _local = local;
        _blockBytes = blockBytes;
        Output = output;
        _attached = new bool[servers];
        _attached[localInput] = true;
        var job = owner.Job;
        // As a root reducer: a job whose reduce only passes the folded value on is combined, on the merger's fast paths.
        var mode = job.IsAssociativeCommutative && job.ReduceIsIdentity ? MergeMode.Combine : MergeMode.Reduce;
        _merger = new StreamMerger(job, servers, mode, inputBytes);
    }

    public int ReduceTask { get; }

    public ReduceOutput Output { get; }

    public bool IsFinished { get; private set; }

    /// <summary>Virtual time (ns) at which the last output byte was written; -1 while running.</summary>
    public long CompletedAt { get; private set; } = -1;

    /// <summary>Bytes the reducer took in: every stream's records and the local runs.</summary>
    public long InputBytes => _merger.InputBytes;

    /// <summary>Takes server <paramref name="input"/>'s stream; false if it already has one.</summary>
    public bool Attach(int input)
    {
        if (_attached[input])
        {
            return false;
        }
        _attached[input] = true;
        return true;
    }

    public void OnData(int input, ReadOnlySpan<byte> data)
    {
        _merger.Append(input, data);
        Pump();
    }

    public void OnEnd(int input)
    {
        _merger.Finish(input);
        Pump();
    }

    public void Pump()
    {
        if (IsFinished)
        {
            return;
        }
        FeedLocal();
        var chunk = _chunk!;
        while (true)
        {
            var status = _merger.Drain(chunk, out int written);
            _owner.Declare(ComputeWork.Reduce, _merger.ConsumedBytes, ref _charged);
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

    /// <summary>Feeds the local input if the merger waits for it; whether anything changed.</summary>
    private bool FeedLocal()
    {
        if (_local.IsCompleted && _merger.IsFinished(_localInput))
        {
            return false;
        }
        bool changed = false;
        while (_merger.NeedsData(_localInput) && !_local.IsCompleted)
        {
            int written = _local.Drain(_merger.AppendSpace(_localInput, _blockBytes));
            _merger.CommitAppend(_localInput, written);
            _owner.Declare(ComputeWork.Merge, _local.ConsumedBytes, ref _localCharged);
            changed = true;
        }
        if (_local.IsCompleted && !_merger.IsFinished(_localInput))
        {
            _merger.Finish(_localInput);
            changed = true;
        }
        return changed;
    }

    private void Complete()
    {
        _merger.ReleaseBuffers();
        _chunk = null;
        Output.Complete();
        IsFinished = true;
        CompletedAt = _owner.Now;
        _owner.OnReducerCompleted(this);
    }
}
