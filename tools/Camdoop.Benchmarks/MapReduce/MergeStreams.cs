using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.Benchmarks.MapReduce;

/// <summary>
/// The inputs of one on-path vertex: seven sorted record streams (six children plus the local run) of the
/// synthetic job, keys of 4-28 characters with 4-byte counters, generated at output ratio S across the seven.
/// Deterministic, so the benchmark process and the throughput column build the same bytes.
/// </summary>
public static class MergeStreams
{
    public const int Inputs = 7;
    public const int BytesPerInput = 1_000_000;

    public static byte[][] Build(double outputRatio)
    {
        var job = new SyntheticJob();
        var generator = new SyntheticDataGenerator(Inputs, outputRatio, BytesPerInput, seed: 1);
        var streams = new byte[Inputs][];
        for (int i = 0; i < Inputs; i++)
        {
            // One reduce task; the six stripes of a map output are each sorted, so re-sort them into one stream.
            var map = MapTask.Run(job, generator.GenerateServer(i), new MapTaskOptions { ReduceTasks = 1 });
            var records = new List<(byte[] Key, byte[] Value)>();
            for (int stripe = 0; stripe < Stripes.Count; stripe++)
            {
                var reader = new RecordSpanReader(map.Payload(0, stripe).Span);
                while (reader.TryRead(out var key, out var value))
                {
                    records.Add((key.ToArray(), value.ToArray()));
                }
            }
            records.Sort((a, b) => a.Key.AsSpan().SequenceCompareTo(b.Key));
            var buffer = new RecordBuffer(BytesPerInput * 2);
            foreach (var (key, value) in records)
            {
                buffer.Emit(key, value);
            }
            streams[i] = buffer.ToArray();
        }
        return streams;
    }

    public static long TotalBytes(double outputRatio) => Build(outputRatio).Sum(s => (long)s.Length);
}
