using System.Buffers.Binary;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using Camdoop.Records;

namespace Camdoop.MapReduce.Merge;

/// <summary>
/// One input of a <see cref="StreamMerger"/>: the unconsumed bytes of its record stream in a buffer, the head record
/// parsed from them, and what has been consumed. A mutable struct, kept in the merger's array and always used by ref
/// (the merge touches it per record): a copy would be a second, diverging view of one buffer.
/// <para>Invariants:</para>
/// <list type="bullet">
/// <item>The unconsumed bytes are [<see cref="Start"/>, <see cref="End"/>) of <see cref="Data"/> and then, while
/// wrapped, [<see cref="WrapBase"/>, WrapEnd): newer bytes that continue the stream where End left it (maybe inside a
/// record), below Start (see <see cref="AppendSpace"/> and Unwrap).</item>
/// <item><see cref="Data"/> has <see cref="Slack"/> readable bytes past End: 8-byte prefix loads and 32-byte record
/// copies may read past a record (while wrapped, reads past WrapEnd land in the older bytes).</item>
/// <item>While <see cref="HasHead"/>, the record at Start is complete and the Head properties describe it (absolute
/// offsets into Data); only a head is ever consumed, so consumed bytes always end at a record boundary.</item>
/// <item>While the input reads a stream lent with <see cref="Lend"/>, Data is the caller's array and the input's own
/// buffer waits aside: the lent array is only read, and only an own buffer goes back to the buffer supply.</item>
/// <item>A consumed record stays whole where it was until the caller saves its key
/// (<see cref="SaveConsumedKey"/>): during a merger's Drain, buffers are not replaced (see
/// <see cref="InputBufferSupply"/>), and appending, which may move bytes, happens only between Drain calls.</item>
/// <item>Once <see cref="Finished"/>, no byte is appended (<see cref="AppendSpace"/> throws) until <see cref="Reset"/>
/// or <see cref="DiscardBytes"/>.</item>
/// </list>
/// </summary>
internal struct MergeInput
{
    /// <summary>Readable bytes kept past the data.</summary>
    public const int Slack = 32;

    /// <summary>Where the newer bytes start when the input wraps around its buffer; below, room for the record the wrap cut.</summary>
    public const int WrapBase = 512;

    private readonly int _index; // the input's number in its merger, for error messages
    private readonly bool _bytewise; // byte-wise key order: heads have prefixes (otherwise all 0)
    private byte[] _data;

    // The input's own buffer while _data is a caller's lent array (null otherwise).
    private byte[]? _own;
    private int _start;
    private int _end;

    // Non-zero while wrapped: the end of the newer bytes, which start at WrapBase.
    private int _wrapEnd;
    private bool _finished;
    private bool _hasHead;
    private int _headKeyOffset;
    private int _headKeyLength;
    private int _headValueLength;
    private int _headLength;

    // Start of the last consumed record until the caller saves its key (-1: none), then the saved copy.
    private int _consumedStart;
    private byte[] _lastConsumedKey;
    private int _lastConsumedKeyLength;
    private bool _hasLastConsumedKey;
    private long _consumedRecords;

    /// <summary>
    /// An empty, unfinished input <paramref name="index"/> that owns <paramref name="buffer"/>; its heads have key
    /// prefixes under <paramref name="bytewiseKeys"/> order, and 0 under a job-defined one.
    /// </summary>
    public MergeInput(int index, byte[] buffer, bool bytewiseKeys)
    {
        _index = index;
        _bytewise = bytewiseKeys;
        _data = buffer;
        _lastConsumedKey = new byte[32];
        _consumedStart = -1;
    }

    public readonly byte[] Data => _data;

    public readonly int Start => _start;

    public readonly int End => _end;

    public readonly bool IsWrapped => _wrapEnd != 0;

    public readonly bool Finished => _finished;

    public readonly bool HasHead => _hasHead;

    public readonly int HeadKeyOffset => _headKeyOffset;

    public readonly int HeadKeyLength => _headKeyLength;

    public readonly int HeadValueLength => _headValueLength;

    /// <summary>Bytes of the head record, header included.</summary>
    public readonly int HeadLength => _headLength;

    public readonly ReadOnlySpan<byte> HeadKey
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _data.AsSpan(_headKeyOffset, _headKeyLength);
    }

    public readonly ReadOnlySpan<byte> HeadValue
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => _data.AsSpan(_headKeyOffset + _headKeyLength, _headValueLength);
    }

    /// <summary>
    /// The head key's prefix for the minimum scans (<see cref="HeadPrefixes"/>): its first 8 bytes under byte-wise
    /// order (<see cref="PrefixAt"/>), 0 under a job-defined one (then every comparison goes to the comparer).
    /// </summary>
    public readonly ulong HeadPrefix => _bytewise ? PrefixAt(_data, _headKeyOffset, _headKeyLength) : 0;

    public readonly long ConsumedRecords => _consumedRecords;

    /// <summary>Whether the input holds no bytes and is not wrapped (a wrap may hold none yet, but its layout stays).</summary>
    public readonly bool IsEmpty => _start == _end && _wrapEnd == 0;

    /// <summary>Unconsumed bytes, wrapped or not.</summary>
    public readonly int LiveBytes => _end - _start + (_wrapEnd == 0 ? 0 : _wrapEnd - WrapBase);

    /// <summary>Whether the input can take a whole stream in place (<see cref="Lend"/>, <see cref="Adopt"/>): empty, unfinished, not lent.</summary>
    public readonly bool CanTakeStream => !_finished && IsEmpty && _own is null;

    /// <summary>Whether the older bytes hold part of a record that the stream never completed.</summary>
    public readonly bool HasBytesLeft => _start != _end;

    /// <summary>Marks the end of the stream (the caller checks what is left).</summary>
    public void Finish() => _finished = true;

    /// <summary>Back to a new input: empty, unfinished, nothing consumed; the own buffer is kept.</summary>
    public void Reset()
    {
        DiscardBytes();
        _consumedStart = -1;
        _hasLastConsumedKey = false;
        _consumedRecords = 0;
    }

    /// <summary>
    /// Gives the input's own buffer back to <paramref name="buffers"/> for good (its merger is being dropped with its
    /// job); a lent array is the caller's and is not returned. The input must not be used afterwards.
    /// </summary>
    public void ReleaseBuffer(InputBufferSupply buffers)
    {
        DiscardBytes();
        buffers.Return(_data);
        _data = [];
    }

    /// <summary>Drops the buffered bytes and the head and makes the input unfinished; what was consumed stays noted.</summary>
    public void DiscardBytes()
    {
        if (_own is not null)
        {
            _data = _own;
            _own = null;
        }
        _start = 0;
        _end = 0;
        _wrapEnd = 0;
        _hasHead = false;
        _finished = false;
    }

    // ---- Appending ----

    /// <summary>Throws when the input is <see cref="Finished"/>: nothing more can be appended.</summary>
    public readonly void ThrowIfFinished()
    {
        if (_finished)
        {
            throw new InvalidOperationException($"input {_index} is finished; nothing more can be appended");
        }
    }

    /// <summary>
    /// Room for the next <paramref name="count"/> bytes of the stream, at End or, while wrapped, after the newer bytes:
    /// fill it and <see cref="Commit"/>. Makes the room by wrapping around, compacting in place or moving to a larger
    /// buffer from <paramref name="buffers"/>. Throws when the input is finished.
    /// </summary>
    public Span<byte> AppendSpace(int count, InputBufferSupply buffers)
    {
        ThrowIfFinished();
        EnsureRoom(count, buffers);
        return _data.AsSpan(_wrapEnd == 0 ? _end : _wrapEnd, count);
    }

    /// <summary>Appends the first <paramref name="count"/> bytes written into the last <see cref="AppendSpace"/>.</summary>
    public void Commit(int count)
    {
        int room = _wrapEnd == 0 ? _data.Length - Slack - _end : _start - _wrapEnd;
        if ((uint)count > (uint)room)
        {
            throw new ArgumentOutOfRangeException(nameof(count), count, "more than the space handed out");
        }
        if (_wrapEnd == 0)
        {
            _end += count;
        }
        else
        {
            _wrapEnd += count;
        }
    }

    /// <summary>
    /// Reads the stream of <paramref name="count"/> bytes at <paramref name="offset"/> of a caller's
    /// <paramref name="array"/> in place, which has <see cref="Slack"/> readable bytes past it. Only when
    /// <see cref="CanTakeStream"/>; the own buffer comes back on <see cref="Reset"/> or <see cref="DiscardBytes"/>.
    /// </summary>
    public void Lend(byte[] array, int offset, int count)
    {
        Debug.Assert(CanTakeStream && (long)offset + count + Slack <= array.Length, "lend to an empty input, with slack");
        _own = _data;
        _data = array;
        _start = offset;
        _end = offset + count;
    }

    /// <summary>
    /// Takes <paramref name="buffer"/>, whose first <paramref name="length"/> bytes begin the stream, as the own
    /// buffer, with no copy; the previous one goes back to <paramref name="buffers"/>. Only when
    /// <see cref="CanTakeStream"/>, with <see cref="Slack"/> bytes past the stream.
    /// </summary>
    public void Adopt(byte[] buffer, int length, InputBufferSupply buffers)
    {
        Debug.Assert(CanTakeStream && (long)length + Slack <= buffer.Length, "adopt into an empty input, with slack");
        var old = _data;
        _data = buffer;
        _start = 0;
        _end = length;
        buffers.Return(old);
    }

    /// <summary>Whether the buffer is too small for <paramref name="capacity"/> bytes (plus slack) and may grow to it: not lent, not past the array limit.</summary>
    public readonly bool CanGrowFor(int capacity) =>
        _own is null && capacity <= Array.MaxLength - Slack && capacity + Slack > _data.Length;

    /// <summary>Moves the unconsumed bytes to a buffer that holds <paramref name="capacity"/> bytes (see <see cref="CanGrowFor"/>).</summary>
    public void Grow(int capacity, InputBufferSupply buffers) => ReplaceBuffer(Math.Max(capacity, LiveBytes) + Slack, buffers);

    /// <summary>Swaps an own buffer larger than <paramref name="size"/> bytes for one of that size. Only for an empty input.</summary>
    public void Trim(int size, InputBufferSupply buffers)
    {
        if (!IsEmpty)
        {
            throw new InvalidOperationException("trim an empty merger only");
        }
        if (_data.Length > size)
        {
            buffers.Return(_data);
            _data = buffers.Rent(size);
        }
    }

    private void EnsureRoom(int count, InputBufferSupply buffers)
    {
        if (_wrapEnd != 0)
        {
            // Newer bytes may grow up to the older ones' start (reads past them, into the older bytes, are harmless).
            if (_wrapEnd + count <= _start)
            {
                return;
            }
            ReplaceBuffer(Math.Max(_data.Length, LiveBytes + count + Slack), buffers);
            return;
        }
        if (_start == _end)
        {
            _start = 0;
            _end = 0;
        }
        if (_end + count + Slack <= _data.Length)
        {
            return;
        }
        // No room after the bytes but enough before them: wrap around instead of moving them. The merger waits for
        // every child, so a busy child's input holds most of a window when its buffer fills, and compacting moved
        // 0.7 bytes per byte received on 8x8x8 R = 1. The record cut at End is joined up in Unwrap.
        if (WrapBase + count <= _start)
        {
            _wrapEnd = WrapBase;
            buffers.NoteWrap();
            return;
        }
        int live = _end - _start;
        int needed = live + count + Slack;
        // Compact in place when the live bytes fit in three quarters of the buffer (then at least a quarter is won
        // per move, so moving stays proportional to the bytes appended); otherwise grow by half. Growing at half
        // full made a 128 KB window's buffer 512 KB, and doubling made it 256 KB, all of it touched (on 8x8x8 R = 1
        // every child input holds a full window; fresh pages cost more than the merging).
        if (needed > _data.Length || live > _data.Length / 4 * 3)
        {
            ReplaceBuffer(Math.Max(_data.Length + (_data.Length >> 1), needed), buffers);
        }
        else
        {
            MoveLiveBytes(_data, buffers);
        }
    }

    /// <summary>Moves the unconsumed bytes into a new own buffer of at least <paramref name="length"/> bytes; a lent array is let go.</summary>
    private void ReplaceBuffer(int length, InputBufferSupply buffers)
    {
        var old = _own ?? _data;
        MoveLiveBytes(buffers.Rent(length), buffers);
        _own = null;
        buffers.Return(old);
    }

    /// <summary>
    /// Moves the unconsumed bytes to the start of <paramref name="target"/> (the buffer itself, or another; a wrapped
    /// input only to another), the newer ones after the older when wrapped.
    /// </summary>
    private void MoveLiveBytes(byte[] target, InputBufferSupply buffers)
    {
        int live = _end - _start;
        Buffer.BlockCopy(_data, _start, target, 0, live);
        if (_wrapEnd != 0)
        {
            Debug.Assert(!ReferenceEquals(target, _data), "a wrapped input is not compacted in place");
            Buffer.BlockCopy(_data, WrapBase, target, live, _wrapEnd - WrapBase);
            live += _wrapEnd - WrapBase;
            _wrapEnd = 0;
        }
        buffers.NoteMoved(live);
        _headKeyOffset -= _start;
        _data = target;
        _start = 0;
        _end = live;
    }

    /// <summary>
    /// Ends a wrap once the older bytes are used up: their last, cut record (if any) is copied just below the newer
    /// bytes, which then are [Start, End). A cut record longer than <see cref="WrapBase"/> (rare: records are mostly a
    /// few dozen bytes) goes with the newer bytes to another buffer instead, unless the supply is draining: then it
    /// returns false and the merger calls <see cref="EndDeferredWrap"/> later.
    /// </summary>
    private bool Unwrap(InputBufferSupply buffers)
    {
        int cut = _end - _start;
        if (cut > WrapBase)
        {
            if (buffers.TryDeferUnwrap())
            {
                return false;
            }
            ReplaceBuffer(_data.Length, buffers);
            return true;
        }
        Buffer.BlockCopy(_data, _start, _data, WrapBase - cut, cut);
        _start = WrapBase - cut;
        _end = _wrapEnd;
        _wrapEnd = 0;
        return true;
    }

    /// <summary>Ends a wrap that Drain put off (<see cref="InputBufferSupply.TryDeferUnwrap"/>): the bytes move to another buffer.</summary>
    public void EndDeferredWrap(InputBufferSupply buffers)
    {
        Debug.Assert(_wrapEnd != 0 && !_hasHead, "a wrapped input waiting for the record its wrap cut");
        ReplaceBuffer(_data.Length, buffers);
    }

    // ---- The head ----

    /// <summary>
    /// Parses the record at Start into the head, with its <paramref name="prefix"/> (<see cref="HeadPrefix"/>);
    /// false when it is not complete yet (the head is left as it was). Ends the wrap when the older bytes are used
    /// up. Throws on a corrupt header.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryParseHead(InputBufferSupply buffers, out ulong prefix)
    {
        int start = _start;
        int available = _end - start;
        if (available >= 2)
        {
            // Unchecked reads: Start + 2 <= End <= Data.Length.
            byte[] data = _data;
            ref byte record = ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(data), start);
            int total = RecordCodec.ShortHeader(ref record, out int keyLength, out int valueLength);
            if (total > 0 && total <= available)
            {
                prefix = _bytewise ? PrefixAt(data, start + 2, keyLength) : 0;
                SetHead(start + 2, keyLength, valueLength, total);
                return true;
            }
        }
        // The slow path sets the head only: passing it the prefix as an out argument would keep it on the stack, on
        // the fast path too.
        if (TryParseHeadSlow(buffers))
        {
            prefix = HeadPrefix;
            return true;
        }
        prefix = 0;
        return false;
    }

    private bool TryParseHeadSlow(InputBufferSupply buffers)
    {
        switch (RecordCodec.TryParse(_data.AsSpan(_start, _end - _start), out var bounds))
        {
            case RecordParseStatus.Complete:
                SetHead(_start + bounds.KeyOffset, bounds.KeyLength, bounds.ValueLength, bounds.Length);
                return true;
            case RecordParseStatus.Incomplete:
                // The older bytes were used up but for part of a record: go on in the newer ones.
                return _wrapEnd != 0 && Unwrap(buffers) && TryParseHead(buffers, out _);
            default:
                throw new InvalidDataException(
                    $"merge input {_index}: corrupt record stream (a header announces lengths over the limits) after {_consumedRecords} records");
        }
    }

    /// <summary>Sets the head to the record at Start, whose shape the caller has parsed.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public void SetHead(int keyOffset, int keyLength, int valueLength, int length)
    {
        Debug.Assert(keyOffset > _start && keyOffset + keyLength + valueLength == _start + length, "the head is the record at Start");
        _hasHead = true;
        _headKeyOffset = keyOffset;
        _headKeyLength = keyLength;
        _headValueLength = valueLength;
        _headLength = length;
    }

    /// <summary>
    /// Consumes the head and parses the next record, with its <paramref name="prefix"/>; false, with no head, when
    /// it is not complete yet.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryAdvance(InputBufferSupply buffers, out ulong prefix)
    {
        Debug.Assert(_hasHead, "only a head is consumed");
        _consumedStart = _start;
        _start += _headLength;
        _consumedRecords++;
        if (TryParseHead(buffers, out prefix))
        {
            return true;
        }
        _hasHead = false;
        return false;
    }

    /// <summary>
    /// Consumes <paramref name="count"/> whole records that a caller parsed itself, up to <paramref name="start"/>,
    /// the last at <paramref name="lastRecordStart"/>. The input has no head until one is set or parsed.
    /// </summary>
    public void ConsumeRun(long count, int lastRecordStart, int start)
    {
        Debug.Assert(count > 0 && _start <= lastRecordStart && lastRecordStart < start && start <= _end, "a run of records from Start");
        _consumedStart = lastRecordStart;
        _start = start;
        _consumedRecords += count;
        _hasHead = false;
    }

    /// <summary>Consumes <paramref name="count"/> copies of the head lying back to back from Start: the head is then the last copy.</summary>
    public void SkipRepeats(int count)
    {
        int bytes = count * _headLength;
        _start += bytes;
        _headKeyOffset += bytes;
        _consumedRecords += count;
    }

    /// <summary>
    /// How many copies of the head record lie back to back from Start, the head included, at most
    /// <paramref name="limit"/>: without aggregation, a vertex's child stream at S = 0 repeats each (key, 1) record
    /// once per server below it.
    /// </summary>
    public readonly int CountHeadRepeats(int limit)
    {
        int length = _headLength;
        int copies = 1;
        int next = _start + length;
        if (length <= 32 && Vector256.IsHardwareAccelerated)
        {
            // One 32-byte compare per record, under a mask of its length: Slack keeps 32 bytes readable past End.
            ref byte data = ref MemoryMarshal.GetArrayDataReference(_data);
            var record = Vector256.LoadUnsafe(ref data, (nuint)_start);
            uint mask = length == 32 ? uint.MaxValue : (1u << length) - 1;
            for (; copies < limit && next + length <= _end; next += length)
            {
                if ((Vector256.Equals(Vector256.LoadUnsafe(ref data, (nuint)next), record).ExtractMostSignificantBits() & mask) != mask)
                {
                    break;
                }
                copies++;
            }
            return copies;
        }
        var bytes = _data.AsSpan(_start, length);
        for (; copies < limit && next + length <= _end && _data.AsSpan(next, length).SequenceEqual(bytes); next += length)
        {
            copies++;
        }
        return copies;
    }

    /// <summary>The error for a stream that ended in the middle of a record.</summary>
    public readonly InvalidDataException Truncated() =>
        new($"merge input {_index} ended in the middle of a record ({_end - _start} bytes left after {_consumedRecords} records)");

    // ---- Comparing heads ----

    /// <summary>
    /// Whether the head key, whose prefix is known equal to this key's, is the key of <paramref name="length"/> bytes
    /// at <paramref name="offset"/> in <paramref name="data"/> (which has slack too). Byte-wise order only.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public readonly bool HeadKeyEquals(byte[] data, int offset, int length) =>
        _headKeyLength == length && KeyTailsEqual(_data, _headKeyOffset, data, offset, length);

    /// <summary>
    /// Whether two keys of <paramref name="length"/> bytes whose first 8 bytes are known equal (equal prefixes) are
    /// equal: the rest 8 bytes at a time, reading up to 7 bytes past the keys (slack).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool KeyTailsEqual(byte[] xData, int xOffset, byte[] yData, int yOffset, int length)
    {
        if (length <= 8)
        {
            return true;
        }
        ref byte p = ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(xData), xOffset);
        ref byte q = ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(yData), yOffset);
        for (int i = 8; i < length; i += 8)
        {
            ulong diff = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref p, i)) ^ Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref q, i));
            int left = length - i;
            if (left < 8)
            {
                // Only the key's own bytes count (little-endian: the low bytes come first).
                diff &= BitConverter.IsLittleEndian ? (1UL << (left << 3)) - 1 : ~(ulong.MaxValue >> (left << 3));
            }
            if (diff != 0)
            {
                return false;
            }
        }
        return true;
    }

    /// <summary>Value order of the heads of two inputs: the first 8 bytes as a big-endian integer, then the rest.</summary>
    public static int CompareHeadValues(ref MergeInput x, ref MergeInput y)
    {
        int lx = x._headValueLength, ly = y._headValueLength;
        ulong px = PrefixAt(x._data, x._headKeyOffset + x._headKeyLength, lx);
        ulong py = PrefixAt(y._data, y._headKeyOffset + y._headKeyLength, ly);
        if (px != py)
        {
            return px < py ? -1 : 1;
        }
        if (lx <= 8 || ly <= 8)
        {
            return lx.CompareTo(ly);
        }
        return x._data.AsSpan(x._headKeyOffset + x._headKeyLength + 8, lx - 8)
            .SequenceCompareTo(y._data.AsSpan(y._headKeyOffset + y._headKeyLength + 8, ly - 8));
    }

    /// <summary>
    /// The 8-byte big-endian prefix of the <paramref name="length"/> bytes at <paramref name="offset"/>, zero padded.
    /// Unchecked: an input buffer keeps <see cref="Slack"/> bytes after its data.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public static ulong PrefixAt(byte[] data, int offset, int length)
    {
        ulong raw = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(data), offset));
        if (BitConverter.IsLittleEndian)
        {
            raw = BinaryPrimitives.ReverseEndianness(raw);
        }
        return length >= 8 ? raw : raw & ~(ulong.MaxValue >> (length << 3));
    }

    // ---- What was consumed ----

    /// <summary>Whether anything has been consumed since the last <see cref="Reset"/>.</summary>
    public readonly bool HasConsumed => _hasLastConsumedKey || _consumedStart >= 0;

    /// <summary>The key of the last consumed record (empty if none).</summary>
    public readonly ReadOnlySpan<byte> LastConsumedKey =>
        _consumedStart >= 0 ? KeyAt(_data, _consumedStart)
        : _hasLastConsumedKey ? _lastConsumedKey.AsSpan(0, _lastConsumedKeyLength) : default;

    /// <summary>Copies the last consumed record's key out of the buffer, before its bytes may move.</summary>
    public void SaveConsumedKey()
    {
        if (_consumedStart < 0)
        {
            return;
        }
        var key = KeyAt(_data, _consumedStart);
        if (_lastConsumedKey.Length < key.Length)
        {
            _lastConsumedKey = new byte[Math.Max(key.Length, _lastConsumedKey.Length * 2)];
        }
        key.CopyTo(_lastConsumedKey);
        _lastConsumedKeyLength = key.Length;
        _hasLastConsumedKey = true;
        _consumedStart = -1;
    }

    /// <summary>The key of the whole record at <paramref name="recordStart"/> of <paramref name="data"/> (parsed before, so complete).</summary>
    public static ReadOnlySpan<byte> KeyAt(byte[] data, int recordStart)
    {
        var record = data.AsSpan(recordStart);
        RecordCodec.TryParse(record, out var bounds);
        return record.Slice(bounds.KeyOffset, bounds.KeyLength);
    }
}
