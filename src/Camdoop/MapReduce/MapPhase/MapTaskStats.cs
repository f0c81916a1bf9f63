namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// What a map task read and produced. "Logical" bytes are key plus value bytes (the paper's intermediate size);
/// "encoded" bytes add the record headers (what the shuffle carries).
/// </summary>
public sealed record MapTaskStats
{
    public long InputBytes { get; init; }

    public long InputRecords { get; init; }

    /// <summary>Input records the map function dropped as malformed.</summary>
    public long MalformedRecords { get; init; }

    /// <summary>Records emitted by the map function, before combining.</summary>
    public long MapOutputRecords { get; init; }

    public long MapOutputLogicalBytes { get; init; }

    /// <summary>Times the sort buffer was spilled to disk.</summary>
    public int Spills { get; init; }

    /// <summary>Intermediate records after sorting and combining, per reduce task.</summary>
    public required long[] RecordsPerReduceTask { get; init; }

    public required long[] LogicalBytesPerReduceTask { get; init; }

    public required long[] EncodedBytesPerReduceTask { get; init; }

    public long IntermediateRecords => RecordsPerReduceTask.Sum();

    public long IntermediateLogicalBytes => LogicalBytesPerReduceTask.Sum();

    public long IntermediateEncodedBytes => EncodedBytesPerReduceTask.Sum();
}
