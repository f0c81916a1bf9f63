using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Records;

namespace Camdoop.MapReduce.Merge;

public sealed partial class StreamMerger
{
    // The key being grouped, copied so it survives buffer compaction while the group waits for input.
    private bool _groupOpen;
    private byte[] _groupKey = new byte[64];
    private int _groupKeyLength;
    private ulong _groupPrefix;

    // Fold state: the accumulated value and the combiner's destination, swapped after each fold.
    private byte[] _accumulator = new byte[64];
    private int _accumulatorLength;
    private byte[] _scratch = new byte[64];

    // Collect state (non-associative reduce): values back to back and their end offsets.
    private byte[] _values = new byte[256];
    private int _valuesLength;
    private int[] _valueEnds = new int[16];
    private int _valueCount;

    private void OpenGroup(ReadOnlySpan<byte> key, ulong prefix, ReadOnlySpan<byte> value)
    {
        _groupOpen = true;
        _groupPrefix = prefix;
        EnsureCapacity(ref _groupKey, key.Length);
        key.CopyTo(_groupKey);
        _groupKeyLength = key.Length;
        if (_collect)
        {
            _valuesLength = 0;
            _valueCount = 0;
            AddValue(value);
        }
        else
        {
            StartAccumulator(value);
        }
    }

    /// <summary>Opens a group whose values are already folded into the accumulator.</summary>
    private void HoldGroup(ReadOnlySpan<byte> key, ulong prefix)
    {
        _groupOpen = true;
        _groupPrefix = prefix;
        EnsureCapacity(ref _groupKey, key.Length);
        key.CopyTo(_groupKey);
        _groupKeyLength = key.Length;
    }

    private void StartAccumulator(ReadOnlySpan<byte> value)
    {
        EnsureCapacity(ref _accumulator, value.Length);
        value.CopyTo(_accumulator);
        _accumulatorLength = value.Length;
    }

    /// <summary>Folds every head with the group key into the accumulator; true when the key is complete.</summary>
    private bool FoldGroup()
    {
        var key = _groupKey.AsSpan(0, _groupKeyLength);
        // Backwards, because Advance may swap-remove the current input from the live list.
        for (int j = _liveCount - 1; j >= 0; j--)
        {
            int i = _live[j];
            ref var s = ref _inputs[i];
            while (HeadHasKey(ref s, i, key, _groupPrefix))
            {
                Fold(key, s.Data.AsSpan(s.HeadKeyOffset + s.HeadKeyLength, s.HeadValueLength));
                Advance(i);
            }
        }
        return _waiting == 0;
    }

    /// <summary>Gathers the group key's values in merge order (so ascending); true when the key is complete.</summary>
    private bool CollectGroup()
    {
        var key = _groupKey.AsSpan(0, _groupKeyLength);
        while (true)
        {
            if (_waiting > 0)
            {
                return false;
            }
            if (_liveCount == 0)
            {
                return true;
            }
            int m = SelectMin(out _);
            ref var s = ref _inputs[m];
            if (!HeadHasKey(ref s, m, key, _groupPrefix))
            {
                return true;
            }
            AddValue(s.Data.AsSpan(s.HeadKeyOffset + s.HeadKeyLength, s.HeadValueLength));
            Advance(m);
        }
    }

    /// <summary>Folds two values into the accumulator (the first fold of a key).</summary>
    private void FoldFirst(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right)
    {
        while (true)
        {
            if (_job.TryCombine(key, left, right, _accumulator, out int written))
            {
                if ((uint)written > (uint)_accumulator.Length)
                {
                    throw new InvalidOperationException(
                        $"the combiner of job '{_job.Name}' reported {written} bytes written into a {_accumulator.Length}-byte buffer");
                }
                _accumulatorLength = written;
                return;
            }
            if (_accumulator.Length >= RecordLimits.MaxValueBytes)
            {
                throw CombinedValueTooLarge(key);
            }
            _accumulator = new byte[Math.Min(RecordLimits.MaxValueBytes, Math.Max(_accumulator.Length * 2, left.Length + right.Length))];
        }
    }

    private RecordTooLargeException CombinedValueTooLarge(ReadOnlySpan<byte> key) =>
        new($"the combiner of job '{_job.Name}' needs more than {RecordLimits.MaxValueBytes} bytes for one value "
          + $"(the value limit) for a {key.Length}-byte key");

    private void Fold(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        while (true)
        {
            if (_job.TryCombine(key, _accumulator.AsSpan(0, _accumulatorLength), value, _scratch, out int written))
            {
                if ((uint)written > (uint)_scratch.Length)
                {
                    throw new InvalidOperationException(
                        $"the combiner of job '{_job.Name}' reported {written} bytes written into a {_scratch.Length}-byte buffer");
                }
                (_accumulator, _scratch) = (_scratch, _accumulator);
                _accumulatorLength = written;
                return;
            }
            if (_scratch.Length >= RecordLimits.MaxValueBytes)
            {
                throw CombinedValueTooLarge(key);
            }
            _scratch = new byte[Math.Min(RecordLimits.MaxValueBytes, Math.Max(_scratch.Length * 2, _accumulatorLength + value.Length))];
        }
    }

    private void AddValue(ReadOnlySpan<byte> value)
    {
        EnsureCapacity(ref _values, _valuesLength + value.Length);
        value.CopyTo(_values.AsSpan(_valuesLength));
        _valuesLength += value.Length;
        if (_valueCount == _valueEnds.Length)
        {
            Array.Resize(ref _valueEnds, _valueEnds.Length * 2);
        }
        _valueEnds[_valueCount++] = _valuesLength;
    }

    /// <summary>Emits the complete group; false when part of it is still pending (output full).</summary>
    private bool EmitGroup(Span<byte> output, ref int position)
    {
        var key = _groupKey.AsSpan(0, _groupKeyLength);
        _groupOpen = false;
        SetLastKey(key);
        if (_collect)
        {
            _job.Reduce(key, new ValueList(_values.AsSpan(0, _valuesLength), _valueEnds.AsSpan(0, _valueCount)), _emitter);
            position += _pending.Flush(output[position..]);
            return _pending.IsEmpty;
        }
        return EmitFolded(key, output, ref position);
    }

    /// <summary>Emits (key, accumulator): as a record (Combine) or through the reduce function.</summary>
    private bool EmitFolded(ReadOnlySpan<byte> key, Span<byte> output, ref int position)
    {
        if (_mode == MergeMode.Combine)
        {
            var value = _accumulator.AsSpan(0, _accumulatorLength);
            OutputRecords++;
            if (key.Length <= 32 && value.Length <= 32 && output.Length - position >= 66 && _accumulator.Length >= 32)
            {
                // Short record, room to spare: two header bytes and fixed 32-byte block copies (the key sits in an
                // input buffer with slack, the accumulator is at least 32 bytes; bytes past the record are scratch).
                ref byte o = ref Unsafe.Add(ref MemoryMarshal.GetReference(output), position);
                o = (byte)key.Length;
                Unsafe.Add(ref o, 1) = (byte)value.Length;
                ref byte k = ref MemoryMarshal.GetReference(key);
                Vector128.LoadUnsafe(ref k).StoreUnsafe(ref o, 2);
                Vector128.LoadUnsafe(ref k, 16).StoreUnsafe(ref o, 18);
                ref byte v = ref MemoryMarshal.GetArrayDataReference(_accumulator);
                nuint at = (nuint)(2 + key.Length);
                Vector128.LoadUnsafe(ref v).StoreUnsafe(ref o, at);
                Vector128.LoadUnsafe(ref v, 16).StoreUnsafe(ref o, at + 16);
                position += 2 + key.Length + value.Length;
                return true;
            }
            int length = RecordCodec.EncodedLength(key.Length, value.Length);
            if (length <= output.Length - position)
            {
                position += RecordCodec.Write(output[position..], key, value);
                return true;
            }
            _pending.AddRecord(key, value);
        }
        else
        {
            _job.Reduce(key, ValueList.Single(_accumulator.AsSpan(0, _accumulatorLength)), _emitter);
        }
        position += _pending.Flush(output[position..]);
        return _pending.IsEmpty;
    }

    private static void EnsureCapacity(ref byte[] buffer, int length)
    {
        if (buffer.Length < length)
        {
            Array.Resize(ref buffer, Math.Max(buffer.Length * 2, length));
        }
    }
}
