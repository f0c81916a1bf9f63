using System.Buffers;
using System.Buffers.Binary;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// A non-associative example (the Camdoop paper, §4.3): input lines "group TAB number" (a non-negative decimal integer); output
/// the lower median of each group's numbers. Values are 8-byte big-endian numbers, so the ascending byte order in
/// which <see cref="IMapReduceJob.Reduce"/> receives them is numeric order. Bad lines are dropped and counted.
/// </summary>
public sealed class MedianJob : IMapReduceJob
{
    public const string JobName = "median";

    public string Name => JobName;

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => false;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output)
    {
        if (!TextFields.TrySplitKeyNumber(record, out var group, out ulong number))
        {
            output.CountMalformedRecord();
            return;
        }
        Span<byte> value = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(value, number);
        output.Emit(group, value);
    }

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output) =>
        output.Emit(key, values[(values.Count - 1) / 2]);

    public void FormatOutput(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, IBufferWriter<byte> output) =>
        CounterValues.FormatKeyCount(key, BinaryPrimitives.ReadUInt64BigEndian(value), output);
}
