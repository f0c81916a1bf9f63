using Camdoop.MapReduce.Jobs;

namespace Camdoop.MapReduce.Reference;

/// <summary>
/// The reference for a streaming job, as Hadoop Streaming's local test pipes it (<c>mapper | sort | reducer</c>): per
/// server, the mapper over its input lines, then the combiner over its output sorted by key and value; per reduce task
/// (the job's partition of each key), the reducer over its records sorted by key, the values of a key in ascending byte
/// order. Each program runs once per server or reduce task, through the same <see cref="StreamingProcess"/> as the
/// data plane: the job's functions are the programs.
/// </summary>
internal static class ReferenceStreaming
{
    public static ReferenceResult Run(StreamingJob job, IReadOnlyList<ReadOnlyMemory<byte>> serverInputs, int reduceTasks)
    {
        var groups = new SortedDictionary<byte[], List<byte[]>>[reduceTasks];
        for (int r = 0; r < reduceTasks; r++)
        {
            groups[r] = new SortedDictionary<byte[], List<byte[]>>(ByteOrder.Instance);
        }
        long inputRecords = 0, intermediateRecords = 0, intermediateLogical = 0;
        foreach (var input in serverInputs)
        {
            var lines = ReferenceMapReduce.Split(input.ToArray(), job.InputFormat);
            inputRecords += lines.Count;
            var mapped = Run(job.Mapper, lines.Select(line => (line, (byte[]?)null)));
            if (job.Combiner is { } combiner && mapped.Count > 0)
            {
                mapped = Run(combiner, Sorted(mapped));
            }
            foreach (var (key, value) in mapped)
            {
                int r = ((IMapReduceJob)job).Partition(key, reduceTasks);
                if (!groups[r].TryGetValue(key, out var values))
                {
                    groups[r][key] = values = [];
                }
                values.Add(value);
                intermediateRecords++;
                intermediateLogical += key.Length + value.Length;
            }
        }
        var outputs = new List<KeyValuePair<byte[], byte[]>>[reduceTasks];
        for (int r = 0; r < reduceTasks; r++)
        {
            var records = groups[r].SelectMany(g => g.Value.Order(ByteOrder.Instance).Select(v => (g.Key, (byte[]?)v)));
            outputs[r] = [.. Run(job.Reducer, records).Select(p => KeyValuePair.Create(p.Key, p.Value))];
        }
        return new ReferenceResult(job, outputs, inputRecords, intermediateRecords, intermediateLogical);
    }

    /// <summary>Runs <paramref name="command"/> over lines: a key alone, or a key TAB value when there is a value.</summary>
    private static List<(byte[] Key, byte[] Value)> Run(StreamingCommand command, IEnumerable<(byte[] Key, byte[]? Value)> lines)
    {
        var output = new ListEmitter();
        StreamingProcess.Run(command, stdin =>
        {
            foreach (var (key, value) in lines)
            {
                if (value is null)
                {
                    stdin.Write(key);
                    stdin.WriteByte((byte)'\n');
                }
                else
                {
                    StreamingLines.Write(stdin, key, value);
                }
            }
        }, output);
        return output.Records;
    }

    private static IEnumerable<(byte[] Key, byte[]? Value)> Sorted(List<(byte[] Key, byte[] Value)> records) =>
        records.OrderBy(r => r.Key, ByteOrder.Instance).ThenBy(r => r.Value, ByteOrder.Instance).Select(r => (r.Key, (byte[]?)r.Value));

    private sealed class ListEmitter : IRecordEmitter
    {
        public List<(byte[] Key, byte[] Value)> Records { get; } = [];

        public void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value) => Records.Add((key.ToArray(), value.ToArray()));
    }

    private sealed class ByteOrder : IComparer<byte[]>
    {
        public static ByteOrder Instance { get; } = new();

        public int Compare(byte[]? x, byte[]? y) => x.AsSpan().SequenceCompareTo(y);
    }
}
