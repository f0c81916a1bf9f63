namespace Camdoop.MapReduce.Merge;

public sealed partial class StreamMerger
{
    /// <summary>Merge mode: copy the smallest head record as is, while every live input has a head.</summary>
    private DrainStatus DrainMerge(Span<byte> output, ref int position)
    {
        while (true)
        {
            if (_waiting > 0)
            {
                return DrainStatus.NeedsInput;
            }
            if (_liveCount == 0)
            {
                return DrainStatus.Completed;
            }
            if (position == output.Length)
            {
                return DrainStatus.OutputFull;
            }
            int m = SelectMin(out _);
            ref var s = ref _inputs[m];
            int length = s.HeadLength;
            var record = s.Data.AsSpan(s.Start, length);
            NoteEmitted(s.Data, s.HeadKeyOffset, s.HeadKeyLength);
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
            StashPending(record);
            position += FlushPending(output[position..]);
            return DrainStatus.OutputFull;
        }
    }

    /// <summary>Combine and Reduce modes: emit one whole key at a time.</summary>
    private DrainStatus DrainGrouped(Span<byte> output, ref int position)
    {
        while (true)
        {
            if (_groupOpen)
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
            if (_waiting > 0)
            {
                return DrainStatus.NeedsInput;
            }
            if (_liveCount == 0)
            {
                return DrainStatus.Completed;
            }
            if (position == output.Length)
            {
                return DrainStatus.OutputFull;
            }
            int m = SelectMin(out bool tied);
            ref var s = ref _inputs[m];
            byte[] data = s.Data;
            int recordStart = s.Start;
            int recordLength = s.HeadLength;
            int keyOffset = s.HeadKeyOffset;
            int keyLength = s.HeadKeyLength;
            int valueLength = s.HeadValueLength;
            ulong prefix = s.HeadPrefix;
            Advance(m);
            var key = data.AsSpan(keyOffset, keyLength);
            // The key is complete in one record when no other head can have it and input m cannot continue it.
            bool single = _waiting == 0
                && (tied ? !AnyHeadHasKey(key, prefix) : !(s.HasHead && HeadHasKey(ref s, key, prefix)));
            if (!single)
            {
                OpenGroup(key, prefix, data.AsSpan(keyOffset + keyLength, valueLength));
                continue;
            }
            NoteEmitted(data, keyOffset, keyLength);
            if (_mode == MergeMode.Combine)
            {
                OutputRecords++;
                var record = data.AsSpan(recordStart, recordLength);
                if (recordLength <= output.Length - position)
                {
                    record.CopyTo(output[position..]);
                    position += recordLength;
                    continue;
                }
                StashPending(record);
            }
            else
            {
                _job.Reduce(key, Jobs.ValueList.Single(data.AsSpan(keyOffset + keyLength, valueLength)), _emitter);
            }
            position += FlushPending(output[position..]);
            if (_pendingEnd > _pendingStart)
            {
                return DrainStatus.OutputFull;
            }
        }
    }
}
