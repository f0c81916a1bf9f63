using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// The result of one map task: for every (reduce task, stripe), a sorted run, on disk or in memory. A leaf of the
/// shuffle opens its run with <see cref="OpenRun"/> and streams it block by block.
/// </summary>
public sealed class MapOutput
{
    private readonly RunHeader[] _headers;
    private readonly MemorySink? _memory;

    internal MapOutput(MapTaskOptions options, MapTaskStats stats, RunHeader[] headers, MemorySink? memory)
    {
        JobId = options.JobId;
        MapTaskId = options.MapTaskId;
        ReduceTasks = options.ReduceTasks;
        Directory = memory is null ? options.OutputDirectory : null;
        Stats = stats;
        _headers = headers;
        _memory = memory;
    }

    public ulong JobId { get; }

    public ulong MapTaskId { get; }

    public int ReduceTasks { get; }

    public MapTaskStats Stats { get; }

    /// <summary>Directory of the run files, or null when the runs are in memory.</summary>
    public string? Directory { get; }

    public bool InMemory => _memory is not null;

    public RunHeader Header(int reduceTask, int stripe) => _headers[Bucket(reduceTask, stripe)];

    public string RunPath(int reduceTask, int stripe) =>
        Directory is null
            ? throw new InvalidOperationException("this map output is in memory; it has no run files")
            : RunFileLayout.RunPath(Directory, reduceTask, stripe);

    /// <summary>The record stream of an in-memory run (no copy).</summary>
    public ReadOnlyMemory<byte> Payload(int reduceTask, int stripe) =>
        _memory is null
            ? throw new InvalidOperationException("this map output is on disk; use OpenRun")
            : _memory.Bucket(Bucket(reduceTask, stripe));

    /// <summary>Opens the run of (reduce task, stripe) for block-by-block reading, from disk or memory.</summary>
    public RunReader OpenRun(int reduceTask, int stripe) =>
        _memory is null
            ? RunReader.Open(RunPath(reduceTask, stripe))
            : RunReader.FromMemory(Header(reduceTask, stripe), Payload(reduceTask, stripe));

    private int Bucket(int reduceTask, int stripe)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)reduceTask, (uint)ReduceTasks, nameof(reduceTask));
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)stripe, (uint)Stripes.Count, nameof(stripe));
        return reduceTask * Stripes.Count + stripe;
    }
}
