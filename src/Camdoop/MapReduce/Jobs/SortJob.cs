using System.Buffers;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// The "Indy" sort benchmark (the Camdoop paper, §5.1): 100-byte records, a 10-byte key and a 90-byte value. Not associative:
/// vertices only merge. A range partitioner on the key keeps reduce outputs in a total order; the output is the
/// sorted 100-byte records, reduce task 0 first.
/// </summary>
public sealed class SortJob : IMapReduceJob
{
    public const string JobName = "sort";
    public const int RecordBytes = 100;
    public const int KeyBytes = 10;

    public string Name => JobName;

    public InputFormat InputFormat => InputFormat.Fixed(RecordBytes);

    public bool IsAssociativeCommutative => false;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output) => output.Emit(record[..KeyBytes], record[KeyBytes..]);

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output)
    {
        foreach (var value in values)
        {
            output.Emit(key, value);
        }
    }

    public int Partition(ReadOnlySpan<byte> key, int reduceTasks) => RangePartitioner.Partition(key, reduceTasks);

    public void FormatOutput(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, IBufferWriter<byte> output)
    {
        var span = output.GetSpan(key.Length + value.Length);
        key.CopyTo(span);
        value.CopyTo(span[key.Length..]);
        output.Advance(key.Length + value.Length);
    }
}
