using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Runs one map task (the Camdoop paper, §2, §4): splits the input into records, maps them, sorts the intermediate records by
/// key, combines equal keys when the job is associative, splits them per reduce task (the job's partitioner) and
/// per stripe (<see cref="Stripes"/>), and writes one run per (reduce task, stripe): in memory, or as segments of one
/// indexed run file (<see cref="IndexedRunFile"/>). When the sort buffer fills,
/// its sorted content is spilled to a temporary file; the spills are merged (and combined) at the end with a
/// <see cref="StreamMerger"/>, so input size is bounded by disk, not memory.
/// A streaming job's map task runs its mapper program over the whole input and its combiner program over each sorted
/// load of the buffer (<see cref="StreamingMapper"/>, <see cref="StreamingCombiner"/>).
/// CPU-bound and synchronous: the runtime runs it off the event loop; the simulator runs it inline.
/// </summary>
public static class MapTask
{
    private const int MergeBlockBytes = 64 * 1024;

    public static MapOutput Run(IMapReduceJob job, string inputPath, MapTaskOptions options)
    {
        if (!File.Exists(inputPath))
        {
            throw new FileNotFoundException($"map input '{inputPath}' does not exist", inputPath);
        }
        using var input = new FileStream(inputPath, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.SequentialScan);
        return Run(job, input, options);
    }

    public static MapOutput Run(IMapReduceJob job, Stream input, MapTaskOptions options) =>
        Run(job, new InputSplitter(input, job.InputFormat), options);

    public static MapOutput Run(IMapReduceJob job, ReadOnlyMemory<byte> input, MapTaskOptions options) =>
        Run(job, System.Runtime.InteropServices.MemoryMarshal.TryGetArray(input, out var segment)
            ? new InputSplitter(segment, job.InputFormat)
            : new InputSplitter(new ArraySegment<byte>(input.ToArray()), job.InputFormat), options);

    private static MapOutput Run(IMapReduceJob job, InputSplitter splitter, MapTaskOptions options)
    {
        ArgumentNullException.ThrowIfNull(job);
        options.Validate();
        int buckets = options.ReduceTasks * Stripes.Count;
        using var buffer = new SortBuffer(job, options.ReduceTasks, options.SortBufferBytes);
        var spills = new List<SpillFile>();
        try
        {
            if (job is StreamingJob streaming)
            {
                StreamingMapper.Run(streaming, splitter, buffer, () => spills.Add(Spill(job, buffer, options, buckets, spills.Count)));
            }
            else
            {
                while (splitter.TryNext(out var record))
                {
                    job.Map(record, buffer);
                    if (buffer.IsFull)
                    {
                        spills.Add(Spill(job, buffer, options, buckets, spills.Count));
                    }
                }
            }

            RunHeader[] headers;
            BucketCounters counters;
            MemorySink? memory = null;
            if (options.OutputDirectory is null)
            {
                memory = new MemorySink(buckets, (int)Math.Min(buffer.EncodedBytes, Array.MaxLength));
                WriteOutput(job, buffer, spills, memory, options);
                memory.Complete();
                headers = MemoryHeaders(memory, options, job.IsAssociativeCommutative);
                counters = memory.Counters;
            }
            else
            {
                using var files = new IndexedRunFileSink(options.OutputDirectory, options.ReduceTasks, options.JobId, options.MapTaskId, job.IsAssociativeCommutative);
                WriteOutput(job, buffer, spills, files, options);
                files.Complete();
                headers = files.Headers;
                counters = files.Counters;
            }
            return new MapOutput(options, Stats(splitter, buffer, spills.Count, counters, options.ReduceTasks), headers, memory);
        }
        finally
        {
            foreach (var spill in spills)
            {
                spill.Dispose();
            }
        }
    }

    private static SpillFile Spill(IMapReduceJob job, SortBuffer buffer, MapTaskOptions options, int buckets, int index)
    {
        string directory = options.SpillDirectory ?? options.OutputDirectory ?? Path.GetTempPath();
        Directory.CreateDirectory(directory);
        var spill = new SpillFile(Path.Combine(directory, $"spill-{options.MapTaskId:x16}-{Environment.ProcessId}-{index}-{Guid.NewGuid():N}.tmp"), buckets);
        SortAndWrite(job, buffer, spill, options);
        spill.Complete();
        return spill;
    }

    private static void WriteOutput(IMapReduceJob job, SortBuffer buffer, List<SpillFile> spills, IBucketSink sink, MapTaskOptions options)
    {
        int buckets = options.ReduceTasks * Stripes.Count;
        if (spills.Count == 0)
        {
            SortAndWrite(job, buffer, sink, options);
            return;
        }
        var rest = new MemorySink(buckets);
        SortAndWrite(job, buffer, rest, options);
        rest.Complete();
        MergeSpills(job, spills, rest, sink, buckets);
    }

    /// <summary>The buffer's records into the sink, sorted (and combined, by the job's function or its combiner program).</summary>
    private static void SortAndWrite(IMapReduceJob job, SortBuffer buffer, IBucketSink sink, MapTaskOptions options)
    {
        if (job is StreamingJob { Combiner: { } combiner })
        {
            StreamingCombiner.SortAndWrite(combiner, job, buffer, sink, options.ReduceTasks, options.SortBufferBytes);
            return;
        }
        buffer.SortAndWrite(sink);
    }

    /// <summary>Merges, bucket by bucket, every spill with the last in-memory sort into the sink.</summary>
    private static void MergeSpills(IMapReduceJob job, List<SpillFile> spills, MemorySink rest, IBucketSink sink, int buckets)
    {
        int inputs = spills.Count + 1;
        var merger = new StreamMerger(job, inputs, job.IsAssociativeCommutative ? MergeMode.Combine : MergeMode.Merge, MergeBlockBytes);
        var block = new byte[MergeBlockBytes];
        var output = new byte[MergeBlockBytes];
        var parser = new RecordStreamReader(MergeBlockBytes);
        for (int bucket = 0; bucket < buckets; bucket++)
        {
            merger.Reset();
            var memoryBucket = rest.Bucket(bucket);
            int memoryOffset = 0;
            bool begun = false;
            while (true)
            {
                for (int i = 0; i < inputs; i++)
                {
                    if (!merger.NeedsData(i))
                    {
                        continue;
                    }
                    if (i < spills.Count)
                    {
                        int read = spills[i].ReadBucket(bucket, block);
                        if (read == 0)
                        {
                            merger.Finish(i);
                        }
                        else
                        {
                            merger.Append(i, block.AsSpan(0, read));
                        }
                    }
                    else if (memoryOffset == memoryBucket.Length)
                    {
                        merger.Finish(i);
                    }
                    else
                    {
                        int count = Math.Min(MergeBlockBytes, memoryBucket.Length - memoryOffset);
                        merger.Append(i, memoryBucket.Span.Slice(memoryOffset, count));
                        memoryOffset += count;
                    }
                }
                var status = merger.Drain(output, out int written);
                parser.Append(output.AsSpan(0, written));
                while (parser.TryRead(out var key, out var value))
                {
                    if (!begun)
                    {
                        sink.BeginBucket(bucket);
                        begun = true;
                    }
                    sink.Write(key, value);
                }
                if (status == DrainStatus.Completed)
                {
                    break;
                }
            }
            parser.Complete();
            if (begun)
            {
                sink.EndBucket();
            }
        }
    }

    internal static RunHeader[] MemoryHeaders(MemorySink memory, MapTaskOptions options, bool combined)
    {
        var headers = new RunHeader[memory.BucketStart.Length - 1];
        var c = memory.Counters;
        for (int b = 0; b < headers.Length; b++)
        {
            var payload = memory.Bucket(b).Span;
            headers[b] = new RunHeader(options.JobId, options.MapTaskId, b / Stripes.Count, b % Stripes.Count,
                c.Records[b], payload.Length, c.KeyBytes[b], c.ValueBytes[b], XxHash64.Hash(payload), combined);
        }
        return headers;
    }

    private static MapTaskStats Stats(InputSplitter splitter, SortBuffer buffer, int spills, BucketCounters counters, int reduceTasks)
    {
        var (records, logical, encoded) = counters.PerReduceTask(reduceTasks);
        return new MapTaskStats
        {
            InputBytes = splitter.BytesRead,
            InputRecords = splitter.Records,
            MalformedRecords = buffer.MalformedRecords,
            MapOutputRecords = buffer.EmittedRecords,
            MapOutputLogicalBytes = buffer.EmittedLogicalBytes,
            Spills = spills,
            RecordsPerReduceTask = records,
            LogicalBytesPerReduceTask = logical,
            EncodedBytesPerReduceTask = encoded,
        };
    }
}
