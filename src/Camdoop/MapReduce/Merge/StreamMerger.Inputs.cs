using System.Buffers.Binary;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Merge;

public sealed partial class StreamMerger
{
    /// <summary>One input: a byte buffer [Start, End) and its parsed head record (absolute offsets into Data).</summary>
    private struct InputState
    {
        public byte[] Data;

        // The input's own buffer while Data is a caller's array lent by TryLend (null otherwise): it goes back into
        // Data on Reset or ResetInput, and only it ever goes back to the pool.
        public byte[]? Own;
        public int Start;
        public int End;

        // While wrapped (non-zero): the input's newer bytes lie in [WrapBase, WrapEnd), below [Start, End), and
        // continue the stream where End left it, maybe in the middle of a record (see EnsureRoom and Unwrap).
        public int WrapEnd;
        public bool Finished;
        public bool HasHead;
        public int HeadKeyOffset;
        public int HeadKeyLength;
        public int HeadValueLength;
        public int HeadLength;

        // Start of the last consumed record until the end of the Drain call (-1: none), then its key is copied.
        public int ConsumedStart;
        public byte[] LastConsumedKey;
        public int LastConsumedKeyLength;
        public bool HasLastConsumedKey;

        public long AppendedBytes;
        public long ConsumedRecords;
    }

    /// <summary>Parses the record at Start into the head fields; false when it is not complete yet.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool TryParseHead(ref InputState s, int input)
    {
        int available = s.End - s.Start;
        if (available >= 2)
        {
            // Unchecked reads: Start + 2 <= End <= Data.Length.
            ref byte record = ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(s.Data), s.Start);
            int total = RecordCodec.ShortHeader(ref record, out int keyLength, out int valueLength);
            if (total > 0 && total <= available)
            {
                SetHead(ref s, input, s.Start + 2, keyLength, valueLength, total);
                return true;
            }
        }
        return TryParseHeadSlow(ref s, input);
    }

    private bool TryParseHeadSlow(ref InputState s, int input)
    {
        switch (RecordCodec.TryParse(s.Data.AsSpan(s.Start, s.End - s.Start), out var bounds))
        {
            case RecordParseStatus.Complete:
                SetHead(ref s, input, s.Start + bounds.KeyOffset, bounds.KeyLength, bounds.ValueLength, bounds.Length);
                return true;
            case RecordParseStatus.Incomplete:
                if (s.WrapEnd != 0 && Unwrap(ref s))
                {
                    // The older bytes were used up but for part of a record: go on in the newer ones.
                    return TryParseHead(ref s, input);
                }
                return false;
            default:
                throw new InvalidDataException(
                    $"merge input {input}: corrupt record stream (a header announces lengths over the limits) after {s.ConsumedRecords} records");
        }
    }

    // A job-defined order cannot use byte prefixes: all prefixes equal, every comparison goes to the comparer.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void SetHead(ref InputState s, int input, int keyOffset, int keyLength, int valueLength, int length) =>
        ParkHead(ref s, input, keyOffset, keyLength, valueLength, length, _comparer is null ? LoadPrefix(s.Data, keyOffset, keyLength) : 0);

    /// <summary>Sets the head of input <paramref name="input"/>, whose prefix the caller has already loaded.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void ParkHead(ref InputState s, int input, int keyOffset, int keyLength, int valueLength, int length, ulong prefix)
    {
        s.HasHead = true;
        s.HeadKeyOffset = keyOffset;
        s.HeadKeyLength = keyLength;
        s.HeadValueLength = valueLength;
        s.HeadLength = length;
        _heads.Set(input, prefix);
    }

    /// <summary>8-byte big-endian key prefix, zero padded. Unchecked: the buffer keeps <see cref="Slack"/> bytes after End.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong LoadPrefix(byte[] data, int keyOffset, int keyLength)
    {
        ulong raw = Unsafe.ReadUnaligned<ulong>(ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(data), keyOffset));
        if (BitConverter.IsLittleEndian)
        {
            raw = BinaryPrimitives.ReverseEndianness(raw);
        }
        return keyLength >= 8 ? raw : raw & ~(ulong.MaxValue >> (keyLength << 3));
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ref InputState Input(int input) => ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(_inputs), input);

    /// <summary>Consumes the head of <paramref name="input"/> and parses the next record.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Advance(int input)
    {
        ref var s = ref Input(input);
        s.ConsumedStart = s.Start;
        s.Start += s.HeadLength;
        s.ConsumedRecords++;
        if (!TryParseHead(ref s, input))
        {
            OnInputDry(ref s, input);
        }
    }

    private void OnInputDry(ref InputState s, int input)
    {
        s.HasHead = false;
        _heads.Clear(input);
        // A wrapped input here has its next record cut by the wrap and waits for the end of Drain (Unwrap).
        if (!s.Finished || s.WrapEnd != 0)
        {
            _live.HeadLost();
            return;
        }
        if (s.Start != s.End)
        {
            throw Truncated(input, ref s);
        }
        _live.Leave(input, waiting: false);
    }

    private static InvalidDataException Truncated(int input, ref InputState s) =>
        new($"merge input {input} ended in the middle of a record ({s.End - s.Start} bytes left after {s.ConsumedRecords} records)");

    /// <summary>
    /// Makes room for <paramref name="count"/> more bytes, at End or, while wrapped, at WrapEnd (see
    /// <see cref="AppendEnd"/>).
    /// </summary>
    private void EnsureRoom(ref InputState s, int count)
    {
        if (s.WrapEnd != 0)
        {
            // Newer bytes may grow up to the older ones' start (reads past them, into the older bytes, are harmless).
            if (s.WrapEnd + count <= s.Start)
            {
                return;
            }
            ReplaceBuffer(ref s, Math.Max(s.Data.Length, LiveBytes(ref s) + count + Slack));
            return;
        }
        if (s.Start == s.End)
        {
            s.Start = 0;
            s.End = 0;
        }
        if (s.End + count + Slack <= s.Data.Length)
        {
            return;
        }
        // No room after the bytes but enough before them: wrap around instead of moving them. The merger waits for
        // every child, so a busy child's input holds most of a window when its buffer fills, and compacting moved
        // 0.7 bytes per byte received on 8x8x8 R = 1. The record cut at End is joined up in Unwrap.
        if (WrapBase + count <= s.Start)
        {
            s.WrapEnd = WrapBase;
            Wraps++;
            return;
        }
        int live = s.End - s.Start;
        int needed = live + count + Slack;
        // Compact in place when the live bytes fit in three quarters of the buffer (then at least a quarter is won
        // per move, so moving stays proportional to the bytes appended); otherwise grow by half. Growing at half
        // full made a 128 KB window's buffer 512 KB, and doubling made it 256 KB, all of it touched (on 8x8x8 R = 1
        // every child input holds a full window; fresh pages cost more than the merging).
        if (needed > s.Data.Length || live > s.Data.Length / 4 * 3)
        {
            ReplaceBuffer(ref s, Math.Max(s.Data.Length + (s.Data.Length >> 1), needed));
        }
        else
        {
            MoveLiveBytes(ref s, s.Data);
        }
    }

    /// <summary>Moves the input's unconsumed bytes into a new buffer of at least <paramref name="length"/> bytes (from the pool, if any).</summary>
    private void ReplaceBuffer(ref InputState s, int length)
    {
        var old = s.Own ?? s.Data;
        MoveLiveBytes(ref s, _bufferPool?.Rent(length) ?? GC.AllocateUninitializedArray<byte>(length));
        s.Own = null;
        _bufferPool?.Return(old);
    }

    /// <summary>Points a lent input back at its own buffer, empty.</summary>
    private static void EndLoan(ref InputState s)
    {
        if (s.Own is not null)
        {
            s.Data = s.Own;
            s.Own = null;
        }
    }

    /// <summary>
    /// Moves the input's unconsumed bytes to the start of <paramref name="target"/> (its buffer, or a larger one; a
    /// wrapped input only to another buffer), the newer ones after the older when wrapped.
    /// </summary>
    private void MoveLiveBytes(ref InputState s, byte[] target)
    {
        int live = s.End - s.Start;
        Buffer.BlockCopy(s.Data, s.Start, target, 0, live);
        if (s.WrapEnd != 0)
        {
            Debug.Assert(!ReferenceEquals(target, s.Data), "a wrapped input is not compacted in place");
            Buffer.BlockCopy(s.Data, WrapBase, target, live, s.WrapEnd - WrapBase);
            live += s.WrapEnd - WrapBase;
            s.WrapEnd = 0;
        }
        MovedBytes += live;
        s.HeadKeyOffset -= s.Start;
        s.Data = target;
        s.Start = 0;
        s.End = live;
    }

    /// <summary>
    /// Ends a wrap once the older bytes are used up: their last, cut record (if any) is copied just below the newer
    /// bytes, which then are the input's [Start, End). A cut record longer than <see cref="WrapBase"/> (rare: records
    /// are mostly a few dozen bytes) goes with the newer bytes to another buffer instead, but not during Drain, whose
    /// steps hold positions of consumed records in this buffer: then it returns false and Drain does it at its end
    /// (<see cref="UnwrapDeferred"/>).
    /// </summary>
    private bool Unwrap(ref InputState s)
    {
        int cut = s.End - s.Start;
        if (cut > WrapBase)
        {
            if (_draining)
            {
                _unwrapDeferred = true;
                DeferredUnwraps++;
                return false;
            }
            ReplaceBuffer(ref s, s.Data.Length);
            return true;
        }
        Buffer.BlockCopy(s.Data, s.Start, s.Data, WrapBase - cut, cut);
        s.Start = WrapBase - cut;
        s.End = s.WrapEnd;
        s.WrapEnd = 0;
        return true;
    }

    /// <summary>
    /// The unwraps Drain put off (after <see cref="SaveKeys"/>, so no position is held); true if an input that had
    /// no complete record now has one.
    /// </summary>
    private bool UnwrapDeferred()
    {
        _unwrapDeferred = false;
        bool parsed = false;
        for (int i = 0; i < _inputs.Length; i++)
        {
            ref var s = ref _inputs[i];
            if (s.WrapEnd == 0 || s.HasHead)
            {
                continue;
            }
            ReplaceBuffer(ref s, s.Data.Length);
            if (TryParseHead(ref s, i))
            {
                _live.HeadFound();
                parsed = true;
            }
            else if (s.Finished)
            {
                throw Truncated(i, ref s);
            }
        }
        return parsed;
    }

    /// <summary>Whether the input holds no bytes and is not wrapped (a wrap may hold none yet, but its layout stays).</summary>
    private static bool IsEmpty(ref InputState s) => s.Start == s.End && s.WrapEnd == 0;

    /// <summary>Unconsumed bytes of the input, wrapped or not.</summary>
    private static int LiveBytes(ref InputState s) => s.End - s.Start + (s.WrapEnd == 0 ? 0 : s.WrapEnd - WrapBase);

    /// <summary>Where the input's next appended byte goes.</summary>
    private static int AppendEnd(ref InputState s) => s.WrapEnd == 0 ? s.End : s.WrapEnd;

    /// <summary>
    /// The live input with the smallest head; <paramref name="tied"/> tells whether another head has the same
    /// 8-byte prefix (so it may have the same key). Requires every live input to have a head.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int SelectMin(out bool tied)
    {
        var live = _live.Members;
        var prefixes = _heads;
        int best = live[0];
        ulong bestPrefix = prefixes[best];
        tied = false;
        for (int j = 1; j < live.Length; j++)
        {
            int i = live[j];
            ulong prefix = prefixes[i];
            if (prefix < bestPrefix)
            {
                best = i;
                bestPrefix = prefix;
                tied = false;
            }
            else if (prefix == bestPrefix)
            {
                tied = true;
                if (CompareHeads(i, best) < 0)
                {
                    best = i;
                }
            }
        }
        return best;
    }

    /// <summary>Key order of two heads with equal prefixes.</summary>
    private int CompareKeys(int a, int b)
    {
        ref var x = ref _inputs[a];
        ref var y = ref _inputs[b];
        var keyX = x.Data.AsSpan(x.HeadKeyOffset, x.HeadKeyLength);
        var keyY = y.Data.AsSpan(y.HeadKeyOffset, y.HeadKeyLength);
        return _comparer is null ? KeyPrefix.CompareTail(keyX, keyY) : _comparer.Compare(keyX, keyY);
    }

    /// <summary>Full order of two heads with equal prefixes: key, then (merge order) value, then input index.</summary>
    private int CompareHeads(int a, int b)
    {
        int c = CompareKeys(a, b);
        if (c != 0)
        {
            return c;
        }
        ref var x = ref _inputs[a];
        ref var y = ref _inputs[b];
        if (_tieBreakByValue)
        {
            c = x.Data.AsSpan(x.HeadKeyOffset + x.HeadKeyLength, x.HeadValueLength)
                .SequenceCompareTo(y.Data.AsSpan(y.HeadKeyOffset + y.HeadKeyLength, y.HeadValueLength));
            if (c != 0)
            {
                return c;
            }
        }
        return a.CompareTo(b);
    }

    /// <summary>Whether the head of <paramref name="s"/> has the given key.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool HeadHasKey(ref InputState s, int input, ReadOnlySpan<byte> key, ulong prefix)
    {
        if (!s.HasHead || _heads[input] != prefix)
        {
            return false;
        }
        var head = s.Data.AsSpan(s.HeadKeyOffset, s.HeadKeyLength);
        return _comparer is null ? head.SequenceEqual(key) : _comparer.Compare(head, key) == 0;
    }

    /// <summary>
    /// Whether the heads of inputs <paramref name="a"/> and <paramref name="b"/>, whose prefixes are equal, have the
    /// same key. Byte-wise order only. Compares 8 bytes at a time, reading up to 7 bytes past the keys (slack).
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private bool HeadKeysEqual(int a, int b)
    {
        ref var y = ref Input(b);
        return HeadKeyEquals(ref Input(a), y.Data, y.HeadKeyOffset, y.HeadKeyLength);
    }

    /// <summary>
    /// Whether <paramref name="s"/>'s head key, whose prefix is known equal to this key's, is the key of
    /// <paramref name="length"/> bytes at <paramref name="offset"/> in <paramref name="data"/>. Byte-wise order only.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static bool HeadKeyEquals(ref InputState s, byte[] data, int offset, int length) =>
        s.HeadKeyLength == length && KeyTailsEqual(s.Data, s.HeadKeyOffset, data, offset, length);

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

    /// <summary>Whether any live input's head has the given key.</summary>
    private bool AnyHeadHasKey(ReadOnlySpan<byte> key, ulong prefix)
    {
        foreach (int i in _live.Members)
        {
            if (HeadHasKey(ref _inputs[i], i, key, prefix))
            {
                return true;
            }
        }
        return false;
    }
}
