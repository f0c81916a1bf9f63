using System.Buffers;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Splits an in-memory map output made for one reduce task into the output the same input gives for more: a sweep
/// maps each input once at R = 1 and splits it for R = N instead of mapping it again. Each stripe's run is already
/// sorted and combined, and a key's stripe and reduce task depend on the key alone, so the run of (reduce task,
/// stripe) is the stripe's run filtered to that task's keys, in the same order: byte for byte what mapping again
/// would write (for any job whose combine depends only on the values it folds, as associativity and commutativity
/// require).
/// </summary>
public static class MapOutputSplitter
{
    public static MapOutput Split(IMapReduceJob job, MapOutput source, MapTaskOptions options)
    {
        ArgumentNullException.ThrowIfNull(job);
        ArgumentNullException.ThrowIfNull(source);
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        if (!source.InMemory || source.ReduceTasks != 1)
        {
            throw new ArgumentException("only an in-memory map output for one reduce task can be split", nameof(source));
        }
        if (options.OutputDirectory is not null)
        {
            throw new ArgumentException("a split map output stays in memory", nameof(options));
        }
        int reduceTasks = options.ReduceTasks;
        int buckets = reduceTasks * Stripes.Count;
        var sink = new MemorySink(buckets, initialCapacity: 16);
        var counters = sink.Counters;
        long records = 0;
        for (int stripe = 0; stripe < Stripes.Count; stripe++)
        {
            records += source.Header(0, stripe).RecordCount;
        }
        var tasks = ArrayPool<int>.Shared.Rent((int)Math.Max(1, records));
        try
        {
            // Pass 1: each record's reduce task, and each bucket's records and bytes.
            int k = 0;
            for (int stripe = 0; stripe < Stripes.Count; stripe++)
            {
                var run = source.Payload(0, stripe).Span;
                for (int position = 0; position < run.Length; k++)
                {
                    var bounds = Parse(run[position..]);
                    int task = reduceTasks == 1 ? 0 : job.Partition(run.Slice(position + bounds.KeyOffset, bounds.KeyLength), reduceTasks);
                    if ((uint)task >= (uint)reduceTasks)
                    {
                        throw new InvalidOperationException($"job '{job.Name}' partitioned a key to reduce task {task}, outside 0..{reduceTasks - 1}");
                    }
                    tasks[k] = task;
                    int bucket = (task * Stripes.Count) + stripe;
                    counters.Records[bucket]++;
                    counters.KeyBytes[bucket] += bounds.KeyLength;
                    counters.ValueBytes[bucket] += bounds.ValueLength;
                    counters.EncodedBytes[bucket] += bounds.Length;
                    position += bounds.Length;
                }
            }

            // Pass 2: every record copied to the next position of its bucket, buckets in (reduce task, stripe) order.
            var next = new int[buckets];
            long length = 0;
            for (int b = 0; b < buckets; b++)
            {
                sink.BucketStart[b] = next[b] = (int)length;
                length += counters.EncodedBytes[b];
            }
            sink.BucketStart[buckets] = (int)length;
            var data = sink.AdoptPlaced((int)length);
            k = 0;
            for (int stripe = 0; stripe < Stripes.Count; stripe++)
            {
                var run = source.Payload(0, stripe).Span;
                for (int position = 0; position < run.Length; k++)
                {
                    int size = Parse(run[position..]).Length;
                    int bucket = (tasks[k] * Stripes.Count) + stripe;
                    run.Slice(position, size).CopyTo(data.AsSpan(next[bucket]));
                    next[bucket] += size;
                    position += size;
                }
            }
        }
        finally
        {
            ArrayPool<int>.Shared.Return(tasks);
        }

        var headers = MapTask.MemoryHeaders(sink, options, job.IsAssociativeCommutative);
        // The input side (bytes and records read, map output) is the source's; the split changes only the per-task part.
        var (perTaskRecords, perTaskLogical, perTaskEncoded) = counters.PerReduceTask(reduceTasks);
        var perTask = source.Stats with
        {
            RecordsPerReduceTask = perTaskRecords,
            LogicalBytesPerReduceTask = perTaskLogical,
            EncodedBytesPerReduceTask = perTaskEncoded,
        };
        return new MapOutput(options, perTask, headers, sink);
    }

    private static RecordBounds Parse(ReadOnlySpan<byte> records) =>
        RecordCodec.TryParse(records, out var bounds) == RecordParseStatus.Complete
            ? bounds
            : throw new InvalidDataException("map output run holds a truncated or corrupt record");
}
