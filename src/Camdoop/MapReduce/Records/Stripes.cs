namespace Camdoop.MapReduce.Records;

/// <summary>
/// Key-to-stripe mapping (the Camdoop paper, §4.1): a hash of the key bytes (<see cref="KeyHash"/>) picks one of six stripes, one per disjoint tree.
/// It depends on the key bytes only, so every server assigns a key to the same stripe. The seed differs from the
/// hash partitioner's so stripe and reduce task are independent.
/// </summary>
public static class Stripes
{
    public const int Count = 6;

    private const ulong Seed = 0x5EED_57121BE5UL;

    public static int Of(ReadOnlySpan<byte> key) => (int)Math.BigMul(KeyHash.Of(key, Seed), (ulong)Count, out _);
}
