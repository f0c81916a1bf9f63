using Camdoop.MapReduce.Jobs;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// A streaming job's map function over one map task: the task's input records, each as one line, go to the mapper
/// program; the records it writes fill the sort buffer, which spills whenever it is full, as a map function's do.
/// </summary>
internal static class StreamingMapper
{
    public static void Run(StreamingJob job, InputSplitter input, SortBuffer buffer, Action spill) =>
        StreamingProcess.Run(job.Mapper, stdin => Feed(input, stdin), new SpillingEmitter(buffer, spill));

    private static void Feed(InputSplitter input, Stream stdin)
    {
        while (input.TryNext(out var record))
        {
            stdin.Write(record);
            stdin.WriteByte((byte)'\n');
        }
    }

    private sealed class SpillingEmitter(SortBuffer buffer, Action spill) : IRecordEmitter
    {
        public void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
        {
            buffer.Emit(key, value);
            if (buffer.IsFull)
            {
                spill();
            }
        }
    }
}
