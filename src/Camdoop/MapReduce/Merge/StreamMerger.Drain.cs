using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;

namespace Camdoop.MapReduce.Merge;

public sealed partial class StreamMerger
{
    /// <summary>Merge mode: copy the smallest head record as is, while every live input has a head.</summary>
    private DrainStatus DrainMerge(Span<byte> output, ref int position)
    {
        while (true)
        {
            if (_live.Waiting > 0)
            {
                return DrainStatus.NeedsInput;
            }
            if (_live.Count == 0)
            {
                return DrainStatus.Completed;
            }
            if (position == output.Length)
            {
                return DrainStatus.OutputFull;
            }
            // A unique smallest prefix decides alone; otherwise compare keys (and values) in full.
            int m = _heads.ScanMin(out ulong min, out int ties);
            if (ties == 1 && min != ulong.MaxValue && CopyUniqueRun(output, ref position, m, min))
            {
                continue;
            }
            if (ties != 1 && min != ulong.MaxValue && _comparer is null && _inputs.Length <= 32
                && CopyTiedKey(output, ref position, min))
            {
                continue;
            }
            if (ties != 1 || min == ulong.MaxValue)
            {
                m = SelectMin(out _);
            }
            ref var s = ref Input(m);
            int length = s.HeadLength;
            var record = s.Data.AsSpan(s.Start, length);
            _lastEmitted.Note(m, s.Start);
            OutputRecords++;
            if (length <= output.Length - position)
            {
                record.CopyTo(output[position..]);
                position += length;
                Advance(m);
                continue;
            }
            // Consumed bytes stay in place until the next Append, so the record can be stashed after Advance.
            Advance(m);
            _pending.Add(record);
            position += _pending.Flush(output[position..]);
            return DrainStatus.OutputFull;
        }
    }

    /// <summary>
    /// Merge mode, several heads share the smallest prefix: find the smallest key among them and copy all its
    /// records in (value, input) order, choosing only among the inputs that hold it. Stops when an input runs dry
    /// (it might still deliver the key) or the next record does not fit. Byte-wise keys only; false if no progress.
    /// </summary>
    private bool CopyTiedKey(Span<byte> output, ref int position, ulong min)
    {
        uint group = 0;
        int best = -1;
        for (int i = 0; i < _inputs.Length; i++)
        {
            if (_heads[i] != min)
            {
                continue;
            }
            if (best < 0 || HeadKeysEqual(i, best))
            {
                best = best < 0 ? i : best;
                group |= 1u << i;
            }
            else if (CompareKeys(i, best) < 0)
            {
                best = i;
                group = 1u << i;
            }
        }
        ref var b = ref Input(best);
        byte[] keyData = b.Data; // stays in place during this Drain
        int keyOffset = b.HeadKeyOffset, keyLength = b.HeadKeyLength;
        bool progress = false;
        while (group != 0)
        {
            // The head with the smallest (value, input), and the runner-up: the others' heads stay put while input m
            // is copied, so m goes on alone until its next record passes the runner-up (on a tree at S = 0, a child's
            // stream repeats a key once per server below it, all with the same value).
            int m = BitOperations.TrailingZeroCount(group);
            int runnerUp = -1;
            for (uint rest = group & (group - 1); rest != 0; rest &= rest - 1)
            {
                int i = BitOperations.TrailingZeroCount(rest);
                if (CompareHeadValues(i, m) < 0)
                {
                    runnerUp = m;
                    m = i;
                }
                else if (runnerUp < 0 || CompareHeadValues(i, runnerUp) < 0)
                {
                    runnerUp = i;
                }
            }
            ref var s = ref Input(m);
            while (true)
            {
                int length = s.HeadLength;
                if (length > output.Length - position)
                {
                    return progress;
                }
                int copies = s.CountHeadRepeats((output.Length - position) / length);
                if (copies == 1)
                {
                    CopyRecord(ref Unsafe.Add(ref MemoryMarshal.GetReference(output), position), output.Length - position, s.Data, s.Start, length);
                }
                else
                {
                    // The copies move as one block and the head steps to the last of them (the same key and shape).
                    int repeated = (copies - 1) * length;
                    s.Data.AsSpan(s.Start, repeated + length).CopyTo(output[position..]);
                    s.SkipRepeats(copies - 1);
                }
                position += copies * length;
                OutputRecords += copies;
                _lastEmitted.Note(m, s.Start);
                progress = true;
                Advance(m);
                if (!s.HasHead || _heads[m] != min || !s.HeadKeyEquals(keyData, keyOffset, keyLength))
                {
                    group &= ~(1u << m);
                    break;
                }
                // Input m still has a head, so it did not run dry: no input is waiting.
                if (runnerUp >= 0)
                {
                    int order = CompareHeadValues(m, runnerUp);
                    if (order > 0 || (order == 0 && runnerUp < m))
                    {
                        break;
                    }
                }
            }
            if (_live.Waiting > 0)
            {
                break;
            }
        }
        return progress;
    }

    /// <summary>Combine and Reduce modes: emit one whole key at a time.</summary>
    private DrainStatus DrainGrouped(Span<byte> output, ref int position)
    {
        while (true)
        {
            if (_group.IsOpen)
            {
                if (!(_collect ? CollectGroup() : FoldGroup()))
                {
                    return DrainStatus.NeedsInput;
                }
                if (!EmitGroup(output, ref position))
                {
                    return DrainStatus.OutputFull;
                }
                continue;
            }
            if (_live.Waiting > 0)
            {
                return DrainStatus.NeedsInput;
            }
            if (_live.Count == 0)
            {
                return DrainStatus.Completed;
            }
            if (position == output.Length)
            {
                return DrainStatus.OutputFull;
            }
            int m = _heads.ScanMin(out ulong min, out int ties);
            bool fits;
            if (ties == 1 && min != ulong.MaxValue)
            {
                fits = _mode == MergeMode.Combine && CopyUniqueRun(output, ref position, m, min)
                    ? _pending.IsEmpty
                    : EmitUniquePrefix(m, min, output, ref position);
            }
            else if (min != ulong.MaxValue && !_collect && _inputs.Length <= 32)
            {
                fits = FoldTiedPrefix(min, output, ref position);
            }
            else
            {
                fits = EmitGeneral(output, ref position);
            }
            if (!fits)
            {
                return DrainStatus.OutputFull;
            }
        }
    }

    /// <summary>
    /// The common case: only input <paramref name="m"/> has a head with the smallest prefix, so its key is the
    /// smallest and no other head has it. It is complete unless input m continues it or ran dry.
    /// Returns false when output is left pending.
    /// </summary>
    private bool EmitUniquePrefix(int m, ulong min, Span<byte> output, ref int position)
    {
        ref var s = ref Input(m);
        byte[] data = s.Data;
        int recordStart = s.Start;
        int recordLength = s.HeadLength;
        int keyOffset = s.HeadKeyOffset;
        int keyLength = s.HeadKeyLength;
        int valueLength = s.HeadValueLength;
        Advance(m);
        var key = data.AsSpan(keyOffset, keyLength);
        if (_live.Waiting > 0 || HeadHasKey(ref s, m, key, min))
        {
            _group.Open(key, min, data.AsSpan(keyOffset + keyLength, valueLength));
            return true;
        }
        return EmitSingle(m, data, recordStart, recordLength, keyOffset, keyLength, valueLength, output, ref position);
    }

    /// <summary>
    /// Several heads share the smallest prefix: find the smallest key among them and fold every record with it
    /// straight from the input buffers; hold the key (copied) only if an input runs dry inside it.
    /// </summary>
    private bool FoldTiedPrefix(ulong min, Span<byte> output, ref int position)
    {
        // The inputs whose head has the prefix, and among them those with the smallest key (usually all).
        int inputs = _inputs.Length;
        uint group = 0;
        int best = -1;
        for (int i = 0; i < inputs; i++)
        {
            if (_heads[i] != min)
            {
                continue;
            }
            if (best < 0 || (_comparer is null ? HeadKeysEqual(i, best) : CompareKeys(i, best) == 0))
            {
                best = best < 0 ? i : best;
                group |= 1u << i;
            }
            else if (CompareKeys(i, best) < 0)
            {
                best = i;
                group = 1u << i;
            }
        }
        ref var b = ref Input(best);
        byte[] data = b.Data;
        int recordStart = b.Start;
        int keyOffset = b.HeadKeyOffset;
        int keyLength = b.HeadKeyLength;
        var key = data.AsSpan(keyOffset, keyLength);
        // The first value stays in its input buffer (bytes do not move during Drain); the first fold writes the
        // accumulator, so a lone value is never copied.
        var first = data.AsSpan(keyOffset + keyLength, b.HeadValueLength);
        bool folded = false;
        Advance(best);
        group &= ~(1u << best);
        bool continued = HeadHasKey(ref b, best, key, min);
        while (group != 0)
        {
            int i = BitOperations.TrailingZeroCount(group);
            group &= group - 1;
            ref var s = ref Input(i);
            var value = s.HeadValue;
            if (folded)
            {
                _group.Fold(key, value);
            }
            else
            {
                _group.FoldFirst(key, first, value);
                folded = true;
            }
            Advance(i);
            continued |= HeadHasKey(ref s, i, key, min);
        }
        if (!folded)
        {
            _group.SetAccumulator(first);
        }
        if (continued)
        {
            // An input repeats the key: fold the rest in the general way (only merge-mode streams do this).
            continued = !FoldRest(key, min);
        }
        if (continued || _live.Waiting > 0)
        {
            _group.Hold(key, min);
            return true;
        }
        _lastEmitted.Note(best, recordStart);
        return EmitFolded(key, output, ref position);
    }

    /// <summary>Folds further records with the key from every input; true when none is left in any head.</summary>
    private bool FoldRest(ReadOnlySpan<byte> key, ulong prefix)
    {
        for (int i = 0; i < _inputs.Length; i++)
        {
            ref var s = ref Input(i);
            while (HeadHasKey(ref s, i, key, prefix))
            {
                _group.Fold(key, s.HeadValue);
                Advance(i);
            }
        }
        return true;
    }

    /// <summary>Everything else (exhausted inputs, job-defined order, non-associative reduce): full comparisons.</summary>
    private bool EmitGeneral(Span<byte> output, ref int position)
    {
        int m = SelectMin(out bool tied);
        ref var s = ref Input(m);
        byte[] data = s.Data;
        int recordStart = s.Start;
        int recordLength = s.HeadLength;
        int keyOffset = s.HeadKeyOffset;
        int keyLength = s.HeadKeyLength;
        int valueLength = s.HeadValueLength;
        ulong prefix = _heads[m];
        Advance(m);
        var key = data.AsSpan(keyOffset, keyLength);
        // The key is complete in one record when no other head can have it and input m cannot continue it.
        bool single = _live.Waiting == 0 && (tied ? !AnyHeadHasKey(key, prefix) : !HeadHasKey(ref s, m, key, prefix));
        if (!single)
        {
            _group.Open(key, prefix, data.AsSpan(keyOffset + keyLength, valueLength));
            return true;
        }
        return EmitSingle(m, data, recordStart, recordLength, keyOffset, keyLength, valueLength, output, ref position);
    }

    /// <summary>Emits a key that has exactly one record (already consumed; its bytes are still in place).</summary>
    private bool EmitSingle(int input, byte[] data, int recordStart, int recordLength, int keyOffset, int keyLength, int valueLength,
        Span<byte> output, ref int position)
    {
        _lastEmitted.Note(input, recordStart);
        if (_mode == MergeMode.Combine)
        {
            OutputRecords++;
            var record = data.AsSpan(recordStart, recordLength);
            if (recordLength <= output.Length - position)
            {
                record.CopyTo(output[position..]);
                position += recordLength;
                return true;
            }
            _pending.Add(record);
        }
        else
        {
            _job.Reduce(data.AsSpan(keyOffset, keyLength), Jobs.ValueList.Single(data.AsSpan(keyOffset + keyLength, valueLength)), _emitter);
        }
        position += _pending.Flush(output[position..]);
        return _pending.IsEmpty;
    }
}
