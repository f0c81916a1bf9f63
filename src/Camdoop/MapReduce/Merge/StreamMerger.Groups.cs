using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using Camdoop.MapReduce.Jobs;
using Camdoop.Records;

namespace Camdoop.MapReduce.Merge;

public sealed partial class StreamMerger
{
    /// <summary>Folds every head with the open group's key into it; true when the key is complete.</summary>
    private bool FoldGroup()
    {
        var key = _group.Key;
        ulong prefix = _group.Prefix;
        int count = PrefixHolders(prefix);
        if (count >= 0)
        {
            // Only the inputs holding the prefix can hold the key; they fold in the order the loop below visits them
            // (from the last live input to the first), so a job whose fold depends on order gets the same value.
            var order = _foldOrder.AsSpan(0, count);
            for (int j = 0; j < count; j++)
            {
                int input = _prefixHolders[j];
                order[j] = ((long)_live.PlaceOf(input) << 32) | (uint)input;
            }
            order.Sort();
            for (int j = count - 1; j >= 0; j--)
            {
                int i = (int)order[j];
                ref var s = ref _inputs[i];
                while (HeadHasKey(ref s, i, key, prefix))
                {
                    _group.Fold(key, s.HeadValue);
                    Advance(i);
                }
            }
            return _live.Waiting == 0;
        }
        // Backwards, because Advance may swap-remove the current input from the live list.
        for (int j = _live.Count - 1; j >= 0; j--)
        {
            int i = _live[j];
            ref var s = ref _inputs[i];
            while (HeadHasKey(ref s, i, key, prefix))
            {
                _group.Fold(key, s.HeadValue);
                Advance(i);
            }
        }
        return _live.Waiting == 0;
    }

    /// <summary>Gathers the open group's values in merge order (so ascending); true when the key is complete.</summary>
    private bool CollectGroup()
    {
        var key = _group.Key;
        ulong prefix = _group.Prefix;
        while (true)
        {
            if (_live.Waiting > 0)
            {
                return false;
            }
            if (_live.Count == 0)
            {
                return true;
            }
            int m = SelectMin(out _);
            ref var s = ref _inputs[m];
            if (!HeadHasKey(ref s, m, key, prefix))
            {
                return true;
            }
            _group.Add(s.HeadValue);
            Advance(m);
        }
    }

    /// <summary>Emits the complete group; false when part of it is still pending (output full).</summary>
    private bool EmitGroup(Span<byte> output, ref int position)
    {
        _group.Close();
        var key = _group.Key;
        _lastEmitted.Set(key);
        if (_collect)
        {
            _job.Reduce(key, _group.Values, _emitter);
            position += _pending.Flush(output[position..]);
            return _pending.IsEmpty;
        }
        return EmitFolded(key, output, ref position);
    }

    /// <summary>Emits (key, accumulated value): as a record (Combine) or through the reduce function.</summary>
    private bool EmitFolded(ReadOnlySpan<byte> key, Span<byte> output, ref int position)
    {
        var value = _group.Accumulated;
        if (_mode == MergeMode.Combine)
        {
            OutputRecords++;
            if (key.Length <= 32 && value.Length <= 32 && output.Length - position >= 66 && _group.AccumulatorCapacity >= 32)
            {
                // Short record, room to spare: two header bytes and fixed 32-byte block copies (the key sits in an
                // input buffer with slack or in the group's copy, the accumulator holds at least 32 bytes; bytes past
                // the record are scratch).
                ref byte o = ref Unsafe.Add(ref MemoryMarshal.GetReference(output), position);
                o = (byte)key.Length;
                Unsafe.Add(ref o, 1) = (byte)value.Length;
                ref byte k = ref MemoryMarshal.GetReference(key);
                Vector128.LoadUnsafe(ref k).StoreUnsafe(ref o, 2);
                Vector128.LoadUnsafe(ref k, 16).StoreUnsafe(ref o, 18);
                ref byte v = ref MemoryMarshal.GetReference(value);
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
            _job.Reduce(key, ValueList.Single(value), _emitter);
        }
        position += _pending.Flush(output[position..]);
        return _pending.IsEmpty;
    }
}
