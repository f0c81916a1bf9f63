using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Jobs;

/// <summary>Default partition function: <see cref="KeyHash"/> of the key bytes, reduced to 0 .. reduceTasks-1 by a multiply-high.</summary>
public static class HashPartitioner
{
    private const ulong Seed = 0xCA3D_009B_A271_7105UL;

    // One reduce task takes every key: no hash needed (the multiply-high would give 0).
    public static int Partition(ReadOnlySpan<byte> key, int reduceTasks) =>
        reduceTasks == 1 ? 0 : (int)Math.BigMul(KeyHash.Of(key, Seed), (ulong)reduceTasks, out _);
}
