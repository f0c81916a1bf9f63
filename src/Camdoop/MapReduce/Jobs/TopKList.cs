using System.Buffers.Binary;
using Camdoop.Records;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// A ranked list of (item, score) entries, the value of the TopK job: entries back to back, each an 8-byte
/// big-endian score, a varint item length and the item bytes, best first. Rank order: higher score first, then
/// the item's bytes ascending. Merging two lists and keeping the k best is associative and commutative.
/// </summary>
public static class TopKList
{
    public static int EntryLength(int itemLength) => 8 + RecordCodec.VarintLength(itemLength) + itemLength;

    public static int WriteEntry(Span<byte> destination, ulong score, ReadOnlySpan<byte> item)
    {
        BinaryPrimitives.WriteUInt64BigEndian(destination, score);
        int offset = 8 + RecordCodec.WriteVarint(destination[8..], item.Length);
        item.CopyTo(destination[offset..]);
        return offset + item.Length;
    }

    /// <summary>Reads the entry at the start of <paramref name="list"/>; throws on a malformed list.</summary>
    public static int ReadEntry(ReadOnlySpan<byte> list, out ulong score, out ReadOnlySpan<byte> item)
    {
        if (list.Length < 9
            || RecordCodec.TryReadVarint(list[8..], RecordLimits.MaxValueBytes, out int itemLength, out int header) != RecordParseStatus.Complete
            || 8 + header + itemLength > list.Length)
        {
            throw new InvalidDataException("malformed top-k list");
        }
        score = BinaryPrimitives.ReadUInt64BigEndian(list);
        item = list.Slice(8 + header, itemLength);
        return 8 + header + itemLength;
    }

    /// <summary>Negative when (scoreA, itemA) ranks before (scoreB, itemB).</summary>
    public static int CompareRank(ulong scoreA, ReadOnlySpan<byte> itemA, ulong scoreB, ReadOnlySpan<byte> itemB) =>
        scoreA != scoreB ? (scoreA > scoreB ? -1 : 1) : itemA.SequenceCompareTo(itemB);

    /// <summary>Merges two ranked lists keeping the <paramref name="k"/> best; false when the destination is too small.</summary>
    public static bool TryMerge(ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, int k, Span<byte> destination, out int written)
    {
        written = 0;
        int entries = 0;
        ulong leftScore = 0, rightScore = 0;
        ReadOnlySpan<byte> leftItem = default, rightItem = default;
        int leftLength = left.IsEmpty ? 0 : ReadEntry(left, out leftScore, out leftItem);
        int rightLength = right.IsEmpty ? 0 : ReadEntry(right, out rightScore, out rightItem);
        while (entries < k && (leftLength > 0 || rightLength > 0))
        {
            bool takeLeft = rightLength == 0
                || (leftLength > 0 && CompareRank(leftScore, leftItem, rightScore, rightItem) <= 0);
            int length = takeLeft ? leftLength : rightLength;
            if (written + length > destination.Length)
            {
                return false;
            }
            (takeLeft ? left : right)[..length].CopyTo(destination[written..]);
            written += length;
            entries++;
            if (takeLeft)
            {
                left = left[length..];
                leftLength = left.IsEmpty ? 0 : ReadEntry(left, out leftScore, out leftItem);
            }
            else
            {
                right = right[length..];
                rightLength = right.IsEmpty ? 0 : ReadEntry(right, out rightScore, out rightItem);
            }
        }
        return true;
    }
}
