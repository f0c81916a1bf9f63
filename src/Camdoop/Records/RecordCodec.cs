using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Camdoop.Records;

/// <summary>
/// The record stream encoding: <c>varint(keyLength) varint(valueLength) key value</c>, repeated, with unsigned
/// LEB128 varints (7 bits per byte, low group first). Keys up to 127 bytes with values up to 127 bytes cost two
/// header bytes. Streams are plain bytes: a record may straddle any chunk, frame or block boundary.
/// </summary>
public static class RecordCodec
{
    /// <summary>Bytes needed to encode <paramref name="value"/> as a varint.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int VarintLength(int value) => value < 0x80 ? 1 : value < 0x4000 ? 2 : value < 0x20_0000 ? 3 : value < 0x1000_0000 ? 4 : 5;

    /// <summary>Encoded length of a record with the given key and value lengths.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int EncodedLength(int keyLength, int valueLength) =>
        VarintLength(keyLength) + VarintLength(valueLength) + keyLength + valueLength;

    /// <summary>
    /// Writes one record at the start of <paramref name="destination"/> and returns its length. The caller checks
    /// limits (<see cref="RecordLimits.Check"/>) and that <see cref="EncodedLength"/> bytes fit.
    /// </summary>
    public static int Write(Span<byte> destination, ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        int offset = WriteVarint(destination, key.Length);
        offset += WriteVarint(destination[offset..], value.Length);
        key.CopyTo(destination[offset..]);
        offset += key.Length;
        value.CopyTo(destination[offset..]);
        return offset + value.Length;
    }

    /// <summary>Writes a non-negative varint and returns its length.</summary>
    public static int WriteVarint(Span<byte> destination, int value)
    {
        uint v = (uint)value;
        int i = 0;
        while (v >= 0x80)
        {
            destination[i++] = (byte)(v | 0x80);
            v >>= 7;
        }
        destination[i++] = (byte)v;
        return i;
    }

    /// <summary>
    /// Parses the record at the start of <paramref name="source"/>. On <see cref="RecordParseStatus.Complete"/>,
    /// <paramref name="bounds"/> tells where key and value are and how many bytes the record consumed.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static RecordParseStatus TryParse(ReadOnlySpan<byte> source, out RecordBounds bounds)
    {
        if (source.Length >= 2 && ShortHeader(ref MemoryMarshal.GetReference(source), out int keyLength, out int valueLength) > 0)
        {
            bounds = new RecordBounds(2, keyLength, valueLength);
            return bounds.Length <= source.Length ? RecordParseStatus.Complete : RecordParseStatus.Incomplete;
        }
        return TryParseSlow(source, out bounds);
    }

    /// <summary>
    /// The common record header: two one-byte lengths (key and value both under 128). Returns the record's total
    /// length, or 0 when the header is a longer one. Reads two bytes at <paramref name="record"/>, unchecked: the
    /// caller knows they are there.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static int ShortHeader(ref byte record, out int keyLength, out int valueLength)
    {
        uint b0 = record;
        uint b1 = Unsafe.Add(ref record, 1);
        keyLength = (int)b0;
        valueLength = (int)b1;
        return ((b0 | b1) & 0x80) == 0 ? 2 + (int)(b0 + b1) : 0;
    }

    private static RecordParseStatus TryParseSlow(ReadOnlySpan<byte> source, out RecordBounds bounds)
    {
        bounds = default;
        var status = TryReadVarint(source, RecordLimits.MaxKeyBytes, out int keyLength, out int keyHeader);
        if (status != RecordParseStatus.Complete)
        {
            return status;
        }
        status = TryReadVarint(source[keyHeader..], RecordLimits.MaxValueBytes, out int valueLength, out int valueHeader);
        if (status != RecordParseStatus.Complete)
        {
            return status;
        }
        bounds = new RecordBounds(keyHeader + valueHeader, keyLength, valueLength);
        return bounds.Length <= source.Length ? RecordParseStatus.Complete : RecordParseStatus.Incomplete;
    }

    /// <summary>Reads a varint of at most 3 bytes whose value must not exceed <paramref name="max"/>.</summary>
    public static RecordParseStatus TryReadVarint(ReadOnlySpan<byte> source, int max, out int value, out int length)
    {
        value = 0;
        length = 0;
        int shift = 0;
        for (int i = 0; i < 3; i++)
        {
            if (i >= source.Length)
            {
                return RecordParseStatus.Incomplete;
            }
            byte b = source[i];
            value |= (b & 0x7F) << shift;
            if ((b & 0x80) == 0)
            {
                length = i + 1;
                // Non-minimal encodings (a trailing zero group) are rejected so every record has one encoding.
                if (i > 0 && b == 0)
                {
                    return RecordParseStatus.Malformed;
                }
                return value <= max ? RecordParseStatus.Complete : RecordParseStatus.Malformed;
            }
            shift += 7;
        }
        return RecordParseStatus.Malformed;
    }
}
