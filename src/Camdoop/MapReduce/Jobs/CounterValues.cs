using System.Buffers;
using System.Buffers.Binary;
using System.Buffers.Text;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// Fixed-width big-endian counters (4 or 8 bytes) and their saturating sum, the combiner of the counting jobs.
/// Saturating addition of non-negative counters is still associative and commutative.
/// </summary>
public static class CounterValues
{
    public static bool TrySum32(ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written)
    {
        written = 4;
        if (destination.Length < 4)
        {
            return false;
        }
        ulong sum = (ulong)BinaryPrimitives.ReadUInt32BigEndian(left) + BinaryPrimitives.ReadUInt32BigEndian(right);
        BinaryPrimitives.WriteUInt32BigEndian(destination, sum > uint.MaxValue ? uint.MaxValue : (uint)sum);
        return true;
    }

    public static bool TrySum64(ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written)
    {
        written = 8;
        if (destination.Length < 8)
        {
            return false;
        }
        ulong a = BinaryPrimitives.ReadUInt64BigEndian(left);
        ulong b = BinaryPrimitives.ReadUInt64BigEndian(right);
        ulong sum = a + b;
        BinaryPrimitives.WriteUInt64BigEndian(destination, sum < a ? ulong.MaxValue : sum);
        return true;
    }

    /// <summary>Reads a 4- or 8-byte counter.</summary>
    public static ulong Read(ReadOnlySpan<byte> value) => value.Length switch
    {
        4 => BinaryPrimitives.ReadUInt32BigEndian(value),
        8 => BinaryPrimitives.ReadUInt64BigEndian(value),
        _ => throw new InvalidDataException($"a counter value has {value.Length} bytes; expected 4 or 8"),
    };

    /// <summary>Writes "key TAB decimal-count newline".</summary>
    public static void FormatKeyCount(ReadOnlySpan<byte> key, ulong count, IBufferWriter<byte> output)
    {
        var span = output.GetSpan(key.Length + 22);
        key.CopyTo(span);
        span[key.Length] = (byte)'\t';
        Utf8Formatter.TryFormat(count, span[(key.Length + 1)..], out int digits);
        span[key.Length + 1 + digits] = (byte)'\n';
        output.Advance(key.Length + digits + 2);
    }
}
