using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Service;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// One reduce task's local map output as one sorted stream: every stripe of every local map task, merged (and
/// combined, for an associative job) the way a root reducer merges its local runs. A sender's whole stream, or a
/// reducer's local input.
/// </summary>
internal sealed class LocalRunMerge
{
    private readonly List<LocalRun> _runs;
    private readonly int _blockBytes;
    private StreamMerger? _merger;

    public LocalRunMerge(IMapReduceJob job, List<LocalRun> runs, int blockBytes)
    {
        _runs = runs;
        _blockBytes = blockBytes;
        if (runs.Count > 0)
        {
            _merger = new StreamMerger(job, runs.Count, job.IsAssociativeCommutative ? MergeMode.Combine : MergeMode.Merge);
        }
        IsCompleted = runs.Count == 0;
        RunBytes = runs.Sum(r => r.Length);
    }

    /// <summary>Bytes of the local runs, before any combining: what a server's stream of them is at most.</summary>
    public long RunBytes { get; }

    public bool IsCompleted { get; private set; }

    /// <summary>Input bytes the merge has consumed (for the compute model).</summary>
    public long ConsumedBytes { get; private set; }

    /// <summary>Writes the next merged bytes into <paramref name="output"/>; <see cref="IsCompleted"/> once all are out.</summary>
    public int Drain(Span<byte> output)
    {
        var merger = _merger;
        if (merger is null)
        {
            return 0;
        }
        int total = 0;
        while (total < output.Length)
        {
            for (int i = 0; i < _runs.Count; i++)
            {
                // An in-memory run is lent whole and read where it lies; a run on disk is read block by block.
                if (merger.NeedsData(i) && !_runs[i].TryLendTo(merger, i))
                {
                    _runs[i].Feed(merger, i, _blockBytes);
                }
            }
            var status = merger.Drain(output[total..], out int written);
            total += written;
            if (status == DrainStatus.Completed)
            {
                ConsumedBytes = merger.ConsumedBytes;
                merger.ReleaseBuffers();
                _merger = null;
                IsCompleted = true;
                break;
            }
            ConsumedBytes = merger.ConsumedBytes;
        }
        return total;
    }
}
