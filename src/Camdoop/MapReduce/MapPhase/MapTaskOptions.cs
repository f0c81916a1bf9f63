namespace Camdoop.MapReduce.MapPhase;

/// <summary>Parameters of one map task.</summary>
public sealed record MapTaskOptions
{
    /// <summary>Number of reduce tasks R (1 .. N).</summary>
    public required int ReduceTasks { get; init; }

    /// <summary>64-bit job id written into run headers (e.g. a hash of the 160-bit jobId).</summary>
    public ulong JobId { get; init; }

    /// <summary>The map task id (= chunk id, the Camdoop paper, §4) as 64 bits, written into run headers.</summary>
    public ulong MapTaskId { get; init; }

    /// <summary>
    /// Directory for this task's run files (see <see cref="RunFileLayout.MapTaskDirectory"/>). Null keeps the runs
    /// in memory (the simulator's choice); they are then limited to 2 GB in total.
    /// </summary>
    public string? OutputDirectory { get; init; }

    /// <summary>Where spills go when the sort buffer fills; default: the output directory, else the temp directory.</summary>
    public string? SpillDirectory { get; init; }

    /// <summary>Memory for keys, values and sort entries before a spill (default 64 MiB, at most 1 GiB).</summary>
    public long SortBufferBytes { get; init; } = 64L * 1024 * 1024;

    internal void Validate()
    {
        if (ReduceTasks < 1)
        {
            throw new ArgumentOutOfRangeException(nameof(ReduceTasks), ReduceTasks, "a job needs at least one reduce task");
        }
        if (SortBufferBytes is < 4096 or > 1L << 30)
        {
            throw new ArgumentOutOfRangeException(nameof(SortBufferBytes), SortBufferBytes, "the sort buffer must be 4 KiB to 1 GiB");
        }
    }
}
