using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// The result of one map task: for every (reduce task, stripe), a sorted run, as a segment of the task's indexed
/// run file on disk or in memory. A leaf of the shuffle opens its run with <see cref="OpenRun"/> and streams it
/// block by block; in memory it may also take the bytes directly (<see cref="Payload"/>). Disposing closes the run
/// file (opened on first use and shared by every reader).
/// </summary>
public sealed class MapOutput : IDisposable
{
    private readonly RunHeader[] _headers;
    private readonly MemorySink? _memory;
    private IndexedRunFile? _file;

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

    /// <summary>Directory of the run file, or null when the runs are in memory.</summary>
    public string? Directory { get; }

    public bool InMemory => _memory is not null;

    /// <summary>The indexed run file, or null when the runs are in memory.</summary>
    public string? RunFilePath => Directory is null ? null : RunFileLayout.RunFilePath(Directory);

    public RunHeader Header(int reduceTask, int stripe) => _headers[Bucket(reduceTask, stripe)];

    /// <summary>The record stream of an in-memory run (no copy).</summary>
    public ReadOnlyMemory<byte> Payload(int reduceTask, int stripe) =>
        _memory is null
            ? throw new InvalidOperationException("this map output is on disk; use OpenRun")
            : _memory.Bucket(Bucket(reduceTask, stripe));

    /// <summary>Opens the run of (reduce task, stripe) for block-by-block reading, from disk or memory.</summary>
    public RunSegmentReader OpenRun(int reduceTask, int stripe)
    {
        int bucket = Bucket(reduceTask, stripe);
        if (_memory is not null)
        {
            return RunSegmentReader.FromMemory(_headers[bucket], _memory.Bucket(bucket));
        }
        _file ??= IndexedRunFile.Open(RunFilePath!);
        return _file.OpenSegment(bucket);
    }

    /// <summary>Reads a whole run and checks its checksum against its header; returns the header.</summary>
    public RunHeader VerifyRun(int reduceTask, int stripe)
    {
        using var reader = OpenRun(reduceTask, stripe);
        return reader.VerifyToEnd();
    }

    public void Dispose()
    {
        _file?.Dispose();
        _file = null;
    }

    private int Bucket(int reduceTask, int stripe)
    {
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)reduceTask, (uint)ReduceTasks, nameof(reduceTask));
        ArgumentOutOfRangeException.ThrowIfGreaterThanOrEqual((uint)stripe, (uint)Stripes.Count, nameof(stripe));
        return reduceTask * Stripes.Count + stripe;
    }
}
