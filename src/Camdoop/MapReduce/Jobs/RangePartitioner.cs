using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// Order-preserving partition function for uniformly distributed keys: the first eight key bytes, read as a
/// big-endian fraction of the key space, split it into equal ranges. Concatenating the reduce outputs in task
/// order then yields a total order.
/// </summary>
public static class RangePartitioner
{
    public static int Partition(ReadOnlySpan<byte> key, int reduceTasks) =>
        (int)Math.BigMul(KeyPrefix.Of(key), (ulong)reduceTasks, out _);
}
