using System.Buffers;
using System.Buffers.Binary;
using Camdoop.MapReduce.Jobs;

namespace MyJobs;

/// <summary>
/// Counts the lines of each length in bytes. Output: "length TAB count" lines, shortest first.
/// </summary>
public sealed class LineLengthJob : IMapReduceJob
{
    public string Name => "linelength";

    public InputFormat InputFormat => InputFormat.TextLines;

    // A sum may be applied in any grouping and order: Camdoop then folds counts on the map side and on the path.
    public bool IsAssociativeCommutative => true;

    // Reduce below passes the folded count on unchanged.
    public bool ReduceIsIdentity => true;

    public void Map(ReadOnlySpan<byte> line, IMapEmitter output)
    {
        // Big-endian, so that byte order (the default key order) is numeric order.
        Span<byte> length = stackalloc byte[4];
        BinaryPrimitives.WriteInt32BigEndian(length, line.Length);
        Span<byte> one = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(one, 1);
        output.Emit(length, one);
    }

    public bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right,
                           Span<byte> destination, out int written) =>
        CounterValues.TrySum64(left, right, destination, out written);

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output) => output.Emit(key, values[0]);

    public void FormatOutput(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, IBufferWriter<byte> output)
    {
        Span<byte> digits = stackalloc byte[10];
        BinaryPrimitives.ReadInt32BigEndian(key).TryFormat(digits, out int length);
        CounterValues.FormatKeyCount(digits[..length], CounterValues.Read(value), output);
    }
}
