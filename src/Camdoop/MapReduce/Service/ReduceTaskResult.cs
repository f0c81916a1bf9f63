using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// A finished reduce task: where and when (virtual ns) its last output byte was written, how much it produced
/// (records, key+value bytes, encoded stream bytes, file bytes), a checksum of its record stream, and its file.
/// </summary>
public sealed record ReduceTaskResult(
    ulong JobId,
    int ReduceTask,
    Coordinate Server,
    long CompletedAt,
    long Records,
    long LogicalBytes,
    long StreamBytes,
    long FileBytes,
    ulong Checksum,
    string? OutputPath);
