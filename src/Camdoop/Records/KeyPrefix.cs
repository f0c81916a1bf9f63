using System.Buffers.Binary;
using System.Runtime.CompilerServices;

namespace Camdoop.MapReduce.Records;

/// <summary>
/// The first eight key bytes as a big-endian integer, zero padded: comparing prefixes as integers orders keys
/// byte-wise whenever the prefixes differ, so most comparisons cost one integer compare.
/// </summary>
public static class KeyPrefix
{
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong Of(ReadOnlySpan<byte> key) => key.Length >= 8 ? BinaryPrimitives.ReadUInt64BigEndian(key) : OfShort(key);

    // Byte by byte: a padded copy on the stack kept every call (map emits one per record) from being inlined.
    private static ulong OfShort(ReadOnlySpan<byte> key)
    {
        ulong prefix = 0;
        for (int i = 0; i < key.Length; i++)
        {
            prefix |= (ulong)key[i] << (56 - (8 * i));
        }
        return prefix;
    }

    /// <summary>Byte-wise comparison of two keys whose prefixes are equal.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int CompareTail(ReadOnlySpan<byte> a, ReadOnlySpan<byte> b)
    {
        // Equal prefixes and one key within 8 bytes: that key is a prefix of the other (padding is zero).
        if (a.Length <= 8 || b.Length <= 8)
        {
            return a.Length.CompareTo(b.Length);
        }
        return a[8..].SequenceCompareTo(b[8..]);
    }
}
