using System.Numerics;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Runtime.Intrinsics;
using Camdoop.Records;

namespace Camdoop.MapReduce.Merge;

public sealed partial class StreamMerger
{
    /// <summary>
    /// Whether the hot loop keeps the eight head prefixes of up to eight inputs in one 512-bit register (AVX-512)
    /// rather than scanning them with scalar code. A constant to the JIT; test.sh runs the merge tests both ways.
    /// </summary>
    internal static bool UsesVector512 => Vector512.IsHardwareAccelerated;

    /// <summary>
    /// The hot loop of Merge and Combine modes: while the smallest head prefix is unique, that record is the next
    /// output as is (in Combine mode its key is complete unless the same input continues it), so copy it and move
    /// on, with the loop state in locals. Records keep coming from the same input while their prefix stays below
    /// every other head's (the second-smallest prefix), with no rescan: on a tree, a vertex merges one dense child
    /// stream with sparse ones, so most records extend a run. Stops at anything needing the general path: a prefix
    /// tie, a dry or exhausted input, a record that does not fit. Returns false if it made no progress.
    /// </summary>
    private bool CopyUniqueRun(Span<byte> output, ref int position, int m, ulong min)
    {
        ref byte destination = ref MemoryMarshal.GetReference(output);
        int capacity = output.Length;
        int written = position;
        int entry = position;
        bool combine = _mode == MergeMode.Combine;
        bool prefixOrder = _comparer is null;
        long emitted = 0;
        bool held = false;
        int lastInput = -1, lastStart = 0;
        bool switched = false;
        // With SIMD, the prefixes stay in a register and only the consumed input's lane changes: reloading the
        // array right after storing one lane would stall on store forwarding.
        bool vector = _heads.FitOneVector;
        var lanes = Vector512.Create(0UL, 1, 2, 3, 4, 5, 6, 7);
        var prefixes = vector ? _heads.Load() : default;
        while (true)
        {
            ref var s = ref Input(m);
            // With SIMD, also which inputs hold the threshold: when exactly one does and input m's next key passes it,
            // the run moves straight to that input (see below). -1 (none) without SIMD.
            int successor = -1;
            ulong threshold;
            if (vector)
            {
                threshold = HeadPrefixes.SecondMin(prefixes, lanes, m, out uint holders);
                successor = (holders & (holders - 1)) == 0 ? BitOperations.TrailingZeroCount(holders) : -1;
            }
            else
            {
                threshold = _heads.SecondMin(m);
            }
            // The run's state lives in locals: the input's bytes, read position and end, and the head's shape. Heads
            // with a two-byte header that stay below the threshold (the common case) are parsed right here and only
            // written back to the input when the run leaves this loop.
            byte[] data = s.Data;
            ref byte bytes = ref MemoryMarshal.GetArrayDataReference(data);
            int start = s.Start, end = s.End, length = s.HeadLength;
            int keyLength = s.HeadKeyLength, valueLength = s.HeadValueLength;
            long consumed = 0;
            while (true)
            {
                if (length > capacity - written)
                {
                    if (consumed > 0)
                    {
                        s.ConsumeRun(consumed, lastStart, start);
                        SetHead(ref s, m, start + 2, keyLength, valueLength, length);
                    }
                    goto done;
                }
                CopyRecord(ref Unsafe.Add(ref destination, written), capacity - written, data, start, length);
                int recordStart = start;
                start += length;
                consumed++;
                int available = end - start;
                if (available >= 2 && prefixOrder)
                {
                    int total = RecordCodec.ShortHeader(ref Unsafe.Add(ref bytes, start), out int nextKeyLength, out int nextValueLength);
                    if (total > 0 && total <= available)
                    {
                        ulong next = MergeInput.PrefixAt(data, start + 2, nextKeyLength);
                        if (next < threshold && !(combine && next == min))
                        {
                            written += length;
                            emitted++;
                            lastInput = m;
                            lastStart = recordStart;
                            min = next;
                            length = total;
                            keyLength = nextKeyLength;
                            valueLength = nextValueLength;
                            continue;
                        }
                        if (next > threshold && successor >= 0)
                        {
                            // The run ends and one other input alone holds the smallest prefix: it holds the next
                            // record. Park input m on its parsed head and go on there, without the general step's
                            // re-parse and rescan (on 8x8x8 R=1 a quarter of all records end a run). next > threshold
                            // >= min, so m cannot be continuing the key just copied.
                            s.ConsumeRun(consumed, recordStart, start);
                            ParkHead(ref s, m, start + 2, nextKeyLength, nextValueLength, total, next);
                            written += length;
                            emitted++;
                            lastInput = m;
                            lastStart = recordStart;
                            prefixes = HeadPrefixes.WithLane(prefixes, lanes, m, next);
                            m = successor;
                            min = threshold;
                            switched = true;
                            break;
                        }
                    }
                }
                // Anything else (the input ran dry, a long header, a tie, a key the input may continue): write the
                // run back and take the general step.
                s.ConsumeRun(consumed, recordStart, start);
                consumed = 0;
                bool parsed = TryParseHead(ref s, m);
                ulong head = _heads[m];
                if ((!parsed || (combine && head == min)) && HoldIfContinued(m, parsed, recordStart, min))
                {
                    held = true;
                    goto done;
                }
                written += length;
                emitted++;
                lastInput = m;
                lastStart = recordStart;
                if (_live.Waiting > 0)
                {
                    goto done;
                }
                // Dry-and-finished inputs now hold ulong.MaxValue: rescan. A head equal to another's prefix: rescan
                // (a tie). Otherwise the same input still holds the smallest key.
                if (!parsed || head >= threshold)
                {
                    break;
                }
                min = head;
                start = s.Start;
                end = s.End; // parsing the head may have ended a wrap (Unwrap)
                length = s.HeadLength;
                keyLength = s.HeadKeyLength;
                valueLength = s.HeadValueLength;
            }
            if (switched)
            {
                switched = false;
                continue;
            }
            int ties;
            if (vector)
            {
                prefixes = HeadPrefixes.WithLane(prefixes, lanes, m, _heads[m]);
                m = HeadPrefixes.ScanMin(prefixes, out min, out ties);
            }
            else
            {
                m = _heads.ScanMin(out min, out ties);
            }
            if (ties != 1 && combine && min != ulong.MaxValue && _inputs.Length <= 32)
            {
                // A tied key: fold it here rather than going back through Drain's slower scan.
                position = written;
                bool fits = FoldTiedPrefix(min, output, ref position);
                written = position;
                held |= _group.IsOpen;
                lastInput = -1; // the fold noted its own key, later than any copied before
                if (!fits || _group.IsOpen || _live.Waiting > 0 || written == capacity)
                {
                    break;
                }
                prefixes = vector ? _heads.Load() : default;
                m = vector ? HeadPrefixes.ScanMin(prefixes, out min, out ties) : _heads.ScanMin(out min, out ties);
            }
            if (ties != 1 || min == ulong.MaxValue)
            {
                break;
            }
        }
    done:
        if (lastInput >= 0)
        {
            _lastEmitted.Note(lastInput, lastStart);
        }
        OutputRecords += emitted;
        bool progress = written != entry || emitted > 0 || held;
        position = written;
        return progress;
    }

    /// <summary>
    /// Rare exits of <see cref="CopyUniqueRun"/> after consuming the record at <paramref name="start"/> of input
    /// <paramref name="m"/>: the input ran dry (<paramref name="hasNext"/> false) or its next head shares the prefix.
    /// In Combine mode, if the input may continue the key, the copy is taken back and the key is held as a group.
    /// </summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private bool HoldIfContinued(int m, bool hasNext, int start, ulong min)
    {
        ref var s = ref Input(m);
        if (!hasNext)
        {
            OnInputDry(ref s, m);
        }
        if (_mode != MergeMode.Combine)
        {
            return false;
        }
        var record = s.Data.AsSpan(start); // the record at start is whole (below End, or before a wrap's newer bytes)
        RecordCodec.TryParse(record, out var bounds);
        var key = record.Slice(bounds.KeyOffset, bounds.KeyLength);
        bool continued = hasNext ? HeadHasKey(ref s, m, key, min) : !s.Finished;
        if (continued)
        {
            _group.Open(key, min, record.Slice(bounds.ValueOffset, bounds.ValueLength));
        }
        return continued;
    }

    /// <summary>
    /// Copies one record. Short records move as two 16-byte blocks: the source has <see cref="MergeInput.Slack"/> readable bytes
    /// past its data and the destination has room, so over-reading and over-writing (bytes a later record or the
    /// caller's next Drain overwrites) is safe.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static void CopyRecord(ref byte destination, int room, byte[] data, int start, int length)
    {
        ref byte source = ref Unsafe.Add(ref MemoryMarshal.GetArrayDataReference(data), start);
        if (length <= 32 && room >= 32)
        {
            Vector128.LoadUnsafe(ref source).StoreUnsafe(ref destination);
            Vector128.LoadUnsafe(ref source, 16).StoreUnsafe(ref destination, 16);
            return;
        }
        Unsafe.CopyBlockUnaligned(ref destination, ref source, (uint)length);
    }
}
