using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// A streaming job's combiner over one load of the sort buffer (each spill, and the last): the buffer's records,
/// sorted, go to the combiner program in key order (one bucket after another would restart the order at each), and
/// the records it writes are sorted and bucketed afresh, by their own keys, into the sink. Hadoop runs its combiner at
/// the same points.
/// </summary>
internal static class StreamingCombiner
{
    public static void SortAndWrite(StreamingCommand combiner, IMapReduceJob job, SortBuffer buffer, IBucketSink sink, int reduceTasks, long budgetBytes)
    {
        if (buffer.IsEmpty)
        {
            buffer.SortAndWrite(sink);
            return;
        }
        int buckets = reduceTasks * Stripes.Count;
        var sorted = new MemorySink(buckets, (int)Math.Min(buffer.EncodedBytes, Array.MaxLength));
        buffer.SortAndWrite(sorted);
        sorted.Complete();
        using var combined = new SortBuffer(job, reduceTasks, budgetBytes);
        StreamingProcess.Run(combiner, stdin => WriteInKeyOrder(sorted, buckets, stdin), combined);
        combined.SortAndWrite(sink);
    }

    /// <summary>Every record of the sorted buckets, merged into one key order, as lines. A key lies in one bucket only.</summary>
    private static void WriteInKeyOrder(MemorySink sorted, int buckets, Stream stdin)
    {
        var data = sorted.Data;
        var next = new int[buckets];
        var bounds = new RecordBounds[buckets];
        var heads = new PriorityQueue<int, int>(Comparer<int>.Create((a, b) =>
            Key(data, next[a], bounds[a]).SequenceCompareTo(Key(data, next[b], bounds[b]))));
        for (int b = 0; b < buckets; b++)
        {
            next[b] = sorted.BucketStart[b];
            if (Read(data, next[b], sorted.BucketStart[b + 1], out bounds[b]))
            {
                heads.Enqueue(b, b);
            }
        }
        // A bucket's place in the queue is judged by its head record, which changes only while it is out of the queue.
        while (heads.TryDequeue(out int b, out _))
        {
            var record = data.AsSpan(next[b], bounds[b].Length);
            StreamingLines.Write(stdin, record.Slice(bounds[b].KeyOffset, bounds[b].KeyLength), record.Slice(bounds[b].ValueOffset, bounds[b].ValueLength));
            next[b] += bounds[b].Length;
            if (Read(data, next[b], sorted.BucketStart[b + 1], out bounds[b]))
            {
                heads.Enqueue(b, b);
            }
        }
    }

    private static bool Read(byte[] data, int offset, int end, out RecordBounds bounds)
    {
        bounds = default;
        return offset < end && RecordCodec.TryParse(data.AsSpan(offset, end - offset), out bounds) == RecordParseStatus.Complete;
    }

    private static ReadOnlySpan<byte> Key(byte[] data, int offset, RecordBounds bounds) => data.AsSpan(offset + bounds.KeyOffset, bounds.KeyLength);
}
