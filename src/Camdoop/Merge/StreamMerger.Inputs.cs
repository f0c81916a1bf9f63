using System.Runtime.CompilerServices;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Merge;

public sealed partial class StreamMerger
{
    /// <summary>One input: a byte buffer [Start, End) and its parsed head record (absolute offsets into Data).</summary>
    private struct InputState
    {
        public byte[] Data;
        public int Start;
        public int End;
        public bool Finished;
        public bool HasHead;
        public int HeadKeyOffset;
        public int HeadKeyLength;
        public int HeadValueLength;
        public int HeadLength;
        public ulong HeadPrefix;
        public int LiveIndex;

        // The last consumed key, by position until the end of the Drain call, then copied.
        public int ConsumedKeyOffset;
        public int ConsumedKeyLength;
        public bool ConsumedKeyPending;
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
        byte[] data = s.Data;
        int p = s.Start;
        if (available >= 2)
        {
            uint b0 = data[p];
            uint b1 = data[p + 1];
            if (((b0 | b1) & 0x80) == 0)
            {
                int total = 2 + (int)(b0 + b1);
                if (total > available)
                {
                    return false;
                }
                SetHead(ref s, p + 2, (int)b0, (int)b1, total);
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
                SetHead(ref s, s.Start + bounds.KeyOffset, bounds.KeyLength, bounds.ValueLength, bounds.Length);
                return true;
            case RecordParseStatus.Incomplete:
                return false;
            default:
                throw new InvalidDataException(
                    $"merge input {input}: corrupt record stream (a header announces lengths over the limits) after {s.ConsumedRecords} records");
        }
    }

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void SetHead(ref InputState s, int keyOffset, int keyLength, int valueLength, int length)
    {
        s.HasHead = true;
        s.HeadKeyOffset = keyOffset;
        s.HeadKeyLength = keyLength;
        s.HeadValueLength = valueLength;
        s.HeadLength = length;
        // A job-defined order cannot use byte prefixes: all prefixes equal, every comparison goes to the comparer.
        s.HeadPrefix = _comparer is null ? KeyPrefix.Load(s.Data, keyOffset, keyLength) : 0;
    }

    /// <summary>Consumes the head of <paramref name="input"/> and parses the next record.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private void Advance(int input)
    {
        ref var s = ref _inputs[input];
        s.ConsumedKeyOffset = s.HeadKeyOffset;
        s.ConsumedKeyLength = s.HeadKeyLength;
        s.ConsumedKeyPending = true;
        s.Start += s.HeadLength;
        s.ConsumedRecords++;
        InputRecords++;
        if (!TryParseHead(ref s, input))
        {
            OnInputDry(ref s, input);
        }
    }

    private void OnInputDry(ref InputState s, int input)
    {
        s.HasHead = false;
        if (!s.Finished)
        {
            _waiting++;
            return;
        }
        if (s.Start != s.End)
        {
            throw Truncated(input, ref s);
        }
        RemoveLive(input);
    }

    private static InvalidDataException Truncated(int input, ref InputState s) =>
        new($"merge input {input} ended in the middle of a record ({s.End - s.Start} bytes left after {s.ConsumedRecords} records)");

    private void EnsureRoom(ref InputState s, int count)
    {
        if (s.Start == s.End)
        {
            s.Start = 0;
            s.End = 0;
        }
        if (s.End + count + Slack <= s.Data.Length)
        {
            return;
        }
        int live = s.End - s.Start;
        int needed = live + count + Slack;
        byte[] target = s.Data;
        // Compact in place only if that leaves at least half the buffer free; otherwise grow, so the cost of
        // moving bytes stays proportional to the bytes appended.
        if (needed > s.Data.Length / 2)
        {
            target = new byte[Math.Max(s.Data.Length * 2, needed)];
        }
        Buffer.BlockCopy(s.Data, s.Start, target, 0, live);
        s.HeadKeyOffset -= s.Start;
        s.Data = target;
        s.Start = 0;
        s.End = live;
    }

    private void AddLive(int input)
    {
        _inputs[input].LiveIndex = _liveCount;
        _live[_liveCount++] = input;
    }

    private void RemoveLive(int input)
    {
        int index = _inputs[input].LiveIndex;
        int last = _live[--_liveCount];
        _live[index] = last;
        _inputs[last].LiveIndex = index;
        _inputs[input].LiveIndex = -1;
    }

    /// <summary>
    /// The live input with the smallest head; <paramref name="tied"/> tells whether another head has the same
    /// 8-byte prefix (so it may have the same key). Requires every live input to have a head.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private int SelectMin(out bool tied)
    {
        var inputs = _inputs;
        var live = _live;
        int count = _liveCount;
        int best = live[0];
        ulong bestPrefix = inputs[best].HeadPrefix;
        tied = false;
        for (int j = 1; j < count; j++)
        {
            int i = live[j];
            ulong prefix = inputs[i].HeadPrefix;
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

    /// <summary>Full order of two heads with equal prefixes: key, then (merge order) value, then input index.</summary>
    private int CompareHeads(int a, int b)
    {
        ref var x = ref _inputs[a];
        ref var y = ref _inputs[b];
        var keyX = x.Data.AsSpan(x.HeadKeyOffset, x.HeadKeyLength);
        var keyY = y.Data.AsSpan(y.HeadKeyOffset, y.HeadKeyLength);
        int c = _comparer is null ? KeyPrefix.CompareTail(keyX, keyY) : _comparer.Compare(keyX, keyY);
        if (c != 0)
        {
            return c;
        }
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
    private bool HeadHasKey(ref InputState s, ReadOnlySpan<byte> key, ulong prefix)
    {
        if (s.HeadPrefix != prefix)
        {
            return false;
        }
        var head = s.Data.AsSpan(s.HeadKeyOffset, s.HeadKeyLength);
        return _comparer is null ? head.SequenceEqual(key) : _comparer.Compare(head, key) == 0;
    }

    /// <summary>Whether any live input's head has the given key.</summary>
    private bool AnyHeadHasKey(ReadOnlySpan<byte> key, ulong prefix)
    {
        for (int j = 0; j < _liveCount; j++)
        {
            ref var s = ref _inputs[_live[j]];
            if (s.HasHead && HeadHasKey(ref s, key, prefix))
            {
                return true;
            }
        }
        return false;
    }
}
