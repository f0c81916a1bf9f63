using System.Buffers;
using System.Buffers.Binary;
using Camdoop.MapReduce.Jobs;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// A user job for the testbed, loaded by the nodes from a copy of this test assembly in the testbed's job assembly
/// directory: how many lines have each length. Its own output shape, so it cannot pass for a built-in job.
/// </summary>
public sealed class LineLengthJob : IMapReduceJob
{
    public string Name => "line-length";

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => true;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output)
    {
        Span<byte> key = stackalloc byte[4];
        Span<byte> one = stackalloc byte[8];
        BinaryPrimitives.WriteInt32BigEndian(key, record.Length);
        BinaryPrimitives.WriteUInt64BigEndian(one, 1);
        output.Emit(key, one);
    }

    public bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written) =>
        CounterValues.TrySum64(left, right, destination, out written);

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output) => output.Emit(key, values[0]);

    public void FormatOutput(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value, IBufferWriter<byte> output)
    {
        var text = System.Text.Encoding.ASCII.GetBytes(FormattableString.Invariant(
            $"{BinaryPrimitives.ReadInt32BigEndian(key)}\t{BinaryPrimitives.ReadUInt64BigEndian(value)}\n"));
        output.Write(text);
    }
}
