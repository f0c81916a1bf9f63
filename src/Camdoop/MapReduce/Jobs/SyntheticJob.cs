using System.Buffers;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// The synthetic job of the Camdoop paper, §5.2: every input line is a key; map emits (line, 1) with a 4-byte big-endian
/// counter; combine and reduce sum the counters. Empty lines are dropped and counted as malformed.
/// </summary>
public sealed class SyntheticJob : IMapReduceJob
{
    public const string JobName = "synthetic";
    public const int CounterBytes = 4;

    // The value every map output record carries: a big-endian 1.
    private static readonly byte[] One = [0, 0, 0, 1];

    public string Name => JobName;

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => true;

    public bool ReduceIsIdentity => true;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output)
    {
        if (record.IsEmpty)
        {
            output.CountMalformedRecord();
            return;
        }
        output.Emit(record, One);
    }

    public bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written) =>
        CounterValues.TrySum32(left, right, destination, out written);

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output) => output.Emit(key, values[0]);

    public void FormatOutput(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, IBufferWriter<byte> output) =>
        CounterValues.FormatKeyCount(key, CounterValues.Read(value), output);
}
