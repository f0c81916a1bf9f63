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

    // Overlapping loads instead of a loop over the bytes (whose exit mispredicted on keys of mixed lengths), and no
    // padded copy on the stack (which kept every call from being inlined).
    private static ulong OfShort(ReadOnlySpan<byte> key)
    {
        int length = key.Length;
        if (length >= 4)
        {
            // Bytes 0..3, and the last four shifted to their places (the overlap holds the same bytes).
            return ((ulong)BinaryPrimitives.ReadUInt32BigEndian(key) << 32)
                | ((ulong)BinaryPrimitives.ReadUInt32BigEndian(key[(length - 4)..]) << (64 - (8 * length)));
        }
        if (length > 0)
        {
            int middle = length >> 1;
            return ((ulong)key[0] << 56) | ((ulong)key[middle] << (56 - (8 * middle))) | ((ulong)key[length - 1] << (56 - (8 * (length - 1))));
        }
        return 0;
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
