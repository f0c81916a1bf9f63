using Camdoop.MapReduce.Jobs;
using Camdoop.Records;

namespace Camdoop.MapReduce.Reference;

/// <summary>
/// A plain single-process MapReduce used as the oracle in tests: split every server's input, map, combine per
/// server (associative jobs), then per reduce task sort, group and reduce. No streaming, no buffers, no cleverness;
/// it shares only the job's own functions with the real data plane.
/// </summary>
public static class ReferenceMapReduce
{
    public static ReferenceResult Run(IMapReduceJob job, IReadOnlyList<ReadOnlyMemory<byte>> serverInputs, int reduceTasks)
    {
        ArgumentNullException.ThrowIfNull(job);
        ArgumentOutOfRangeException.ThrowIfLessThan(reduceTasks, 1);
        if (job is StreamingJob streaming)
        {
            return ReferenceStreaming.Run(streaming, serverInputs, reduceTasks);
        }
        var keyOrder = new KeyOrder(job.KeyComparer);
        // Per reduce task: key -> all values that reach the reducer (after each server's combine).
        var groups = new Dictionary<byte[], List<byte[]>>[reduceTasks];
        for (int r = 0; r < reduceTasks; r++)
        {
            groups[r] = new Dictionary<byte[], List<byte[]>>(keyOrder);
        }
        long intermediateRecords = 0;
        long intermediateLogical = 0;
        long inputRecords = 0;
        foreach (var input in serverInputs)
        {
            var mapped = new ListEmitter();
            foreach (var record in Split(input.ToArray(), job.InputFormat))
            {
                inputRecords++;
                job.Map(record, mapped);
            }
            // The map-side combiner: one value per key and server for associative jobs.
            var perServer = new Dictionary<byte[], List<byte[]>>(keyOrder);
            foreach (var (key, value) in mapped.Records)
            {
                if (!perServer.TryGetValue(key, out var list))
                {
                    perServer[key] = list = [];
                }
                list.Add(value);
            }
            foreach (var (key, values) in perServer)
            {
                var sent = job.IsAssociativeCommutative ? [Fold(job, key, values)] : values;
                int r = job.Partition(key, reduceTasks);
                if (!groups[r].TryGetValue(key, out var all))
                {
                    groups[r][key] = all = [];
                }
                foreach (var value in sent)
                {
                    all.Add(value);
                    intermediateRecords++;
                    intermediateLogical += key.Length + value.Length;
                }
            }
        }

        var outputs = new List<KeyValuePair<byte[], byte[]>>[reduceTasks];
        for (int r = 0; r < reduceTasks; r++)
        {
            var output = new ListEmitter();
            foreach (var key in groups[r].Keys.Order(keyOrder))
            {
                var values = groups[r][key];
                if (job.IsAssociativeCommutative)
                {
                    job.Reduce(key, ValueList.Single(Fold(job, key, values)), output);
                }
                else
                {
                    values.Sort((a, b) => a.AsSpan().SequenceCompareTo(b));
                    var packed = values.SelectMany(v => v).ToArray();
                    var ends = new int[values.Count];
                    int end = 0;
                    for (int i = 0; i < values.Count; i++)
                    {
                        end += values[i].Length;
                        ends[i] = end;
                    }
                    job.Reduce(key, new ValueList(packed, ends), output);
                }
            }
            outputs[r] = output.Records.Select(p => KeyValuePair.Create(p.Key, p.Value)).ToList();
        }
        return new ReferenceResult(job, outputs, inputRecords, intermediateRecords, intermediateLogical);
    }

    /// <summary>Splits an input the documented way: '\n' lines without '\r', or fixed-size records.</summary>
    public static List<byte[]> Split(byte[] input, InputFormat format)
    {
        var records = new List<byte[]>();
        if (format.Kind == InputKind.FixedRecords)
        {
            if (input.Length % format.RecordSize != 0)
            {
                throw new InvalidDataException("input ends with a partial record");
            }
            for (int i = 0; i < input.Length; i += format.RecordSize)
            {
                records.Add(input[i..(i + format.RecordSize)]);
            }
            return records;
        }
        int start = 0;
        for (int i = 0; i <= input.Length; i++)
        {
            if (i == input.Length && start == input.Length)
            {
                break;
            }
            if (i == input.Length || input[i] == (byte)'\n')
            {
                int end = i;
                if (end > start && input[end - 1] == (byte)'\r')
                {
                    end--;
                }
                records.Add(input[start..end]);
                start = i + 1;
            }
        }
        return records;
    }

    private static byte[] Fold(IMapReduceJob job, byte[] key, List<byte[]> values)
    {
        byte[] acc = values[0];
        for (int i = 1; i < values.Count; i++)
        {
            int size = 64;
            while (true)
            {
                var destination = new byte[size];
                if (job.TryCombine(key, acc, values[i], destination, out int written))
                {
                    acc = destination[..written];
                    break;
                }
                if (size >= RecordLimits.MaxValueBytes)
                {
                    throw new RecordTooLargeException($"the combiner of job '{job.Name}' exceeds the value limit");
                }
                size = Math.Min(size * 4, RecordLimits.MaxValueBytes);
            }
        }
        return acc;
    }

    private sealed class ListEmitter : IMapEmitter
    {
        public List<(byte[] Key, byte[] Value)> Records { get; } = [];

        public void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
        {
            RecordLimits.Check(key.Length, value.Length, "reference");
            Records.Add((key.ToArray(), value.ToArray()));
        }

        public void CountMalformedRecord()
        {
        }
    }

    /// <summary>Equality by bytes; order by the job's comparer or byte-wise.</summary>
    private sealed class KeyOrder(IKeyComparer? comparer) : IEqualityComparer<byte[]>, IComparer<byte[]>
    {
        public bool Equals(byte[]? x, byte[]? y) => x.AsSpan().SequenceEqual(y);

        public int GetHashCode(byte[] obj)
        {
            var hash = new HashCode();
            hash.AddBytes(obj);
            return hash.ToHashCode();
        }

        public int Compare(byte[]? x, byte[]? y) =>
            comparer is null ? x.AsSpan().SequenceCompareTo(y) : comparer.Compare(x, y);
    }
}
