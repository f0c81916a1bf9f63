using System.Buffers.Binary;
using System.Runtime.CompilerServices;

namespace Camdoop.MapReduce.Records;

/// <summary>
/// The first eight key bytes as a big-endian integer, zero padded: comparing prefixes as integers orders keys
/// byte-wise whenever the prefixes differ, so most comparisons cost one integer compare.
/// </summary>
public static class KeyPrefix
{
    public static ulong Of(ReadOnlySpan<byte> key)
    {
        if (key.Length >= 8)
        {
            return BinaryPrimitives.ReadUInt64BigEndian(key);
        }
        Span<byte> padded = stackalloc byte[8];
        padded.Clear();
        key.CopyTo(padded);
        return BinaryPrimitives.ReadUInt64BigEndian(padded);
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
