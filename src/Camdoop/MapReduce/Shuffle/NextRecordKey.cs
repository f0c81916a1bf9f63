using System.Runtime.CompilerServices;
using Camdoop.Records;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// The first record of an <see cref="OutboundStream"/> starting at or after the highest offset sent, and its key's
/// first eight bytes (zero-padded, big-endian): what the port scheduler orders a job's streams by, lowest key first,
/// so that reducers do not stall waiting for one tree. Each record is stepped over once, as it is sent.
/// A mutable struct, held in a field of its stream and used in place.
/// </summary>
internal struct NextRecordKey
{
    private long _offset;
    private ulong _prefix;
    private long _prefixAt; // the offset _prefix was read at (-1: none)

    public NextRecordKey() => _prefixAt = -1;

    /// <summary>Where the record starts: the stream still needs the bytes from here.</summary>
    public readonly long Offset => _offset;

    /// <summary>The record's key prefix, as of the last <see cref="Refresh"/>.</summary>
    public readonly ulong Prefix => _prefix;

    /// <summary>
    /// Moves to the first record starting at or after <paramref name="sentHigh"/>, in <paramref name="buffer"/> (whose
    /// first byte is stream offset <paramref name="origin"/>, the stream's bytes ending at <paramref name="end"/>).
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    public void Refresh(byte[]? buffer, long origin, long end, long sentHigh)
    {
        if (buffer is null)
        {
            return;
        }
        long walk = _offset;
        if (walk < sentHigh)
        {
            // Every record sent is stepped over once; at R = N (thousands of streams per port, the scheduler asking
            // each for its next key) this loop was the simulator's hottest code, so the common two-byte header (both
            // lengths under 128) is read inline and only longer headers go through the codec.
            do
            {
                if (end - walk >= 2)
                {
                    int total = RecordCodec.ShortHeader(ref buffer[(int)(walk - origin)], out _, out _);
                    if (total > 0)
                    {
                        walk += total;
                        continue;
                    }
                }
                if (!TryRecordLength(buffer, origin, end, walk, out int length))
                {
                    break;
                }
                walk += length;
            }
            while (walk < sentHigh);
            _offset = walk;
        }
        // The bytes at a stream offset never change: read a record's prefix once, not on every scheduler question.
        if (walk < end && walk != _prefixAt && TryKeyPrefix(buffer, origin, end, walk, out ulong prefix))
        {
            _prefix = prefix;
            _prefixAt = walk;
        }
    }

    /// <summary>A new epoch: from its offset 0.</summary>
    public void Reset()
    {
        _offset = 0;
        _prefixAt = -1;
    }

    private static bool TryRecordLength(byte[] buffer, long origin, long end, long offset, out int length)
    {
        length = 0;
        var bytes = buffer.AsSpan((int)(offset - origin), (int)(end - offset));
        if (RecordCodec.TryReadVarint(bytes, RecordLimits.MaxKeyBytes, out int keyLength, out int keyHeader) != RecordParseStatus.Complete
            || RecordCodec.TryReadVarint(bytes[keyHeader..], RecordLimits.MaxValueBytes, out int valueLength, out int valueHeader) != RecordParseStatus.Complete)
        {
            return false;
        }
        length = keyHeader + valueHeader + keyLength + valueLength;
        return true;
    }

    private static bool TryKeyPrefix(byte[] buffer, long origin, long end, long offset, out ulong prefix)
    {
        prefix = 0;
        var bytes = buffer.AsSpan((int)(offset - origin), (int)(end - offset));
        if (RecordCodec.TryReadVarint(bytes, RecordLimits.MaxKeyBytes, out int keyLength, out int keyHeader) != RecordParseStatus.Complete
            || RecordCodec.TryReadVarint(bytes[keyHeader..], RecordLimits.MaxValueBytes, out _, out int valueHeader) != RecordParseStatus.Complete)
        {
            return false;
        }
        int take = Math.Min(8, keyLength);
        int start = keyHeader + valueHeader;
        if (bytes.Length < start + take)
        {
            return false;
        }
        for (int i = 0; i < 8; i++)
        {
            prefix = (prefix << 8) | (i < take ? bytes[start + i] : 0u);
        }
        return true;
    }
}
