using System.Buffers.Binary;
using System.Buffers.Text;
using Camdoop.MapReduce.Jobs;

namespace Camdoop.Simulator.Tests.Experiments.Jobs;

/// <summary>
/// A user job (loaded from this assembly by path) that is associative but whose reduce is not the identity: it counts
/// lines with a binary counter and finalizes each count as decimal text. The root must call its reduce.
/// </summary>
public class FinalizingCountJob : IMapReduceJob
{
    public string Name => "finalizing-count";

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => true;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output)
    {
        Span<byte> one = stackalloc byte[8];
        BinaryPrimitives.WriteUInt64BigEndian(one, 1);
        output.Emit(record, one);
    }

    public bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written)
    {
        written = 8;
        if (destination.Length < 8)
        {
            return false;
        }
        BinaryPrimitives.WriteUInt64BigEndian(destination, BinaryPrimitives.ReadUInt64BigEndian(left) + BinaryPrimitives.ReadUInt64BigEndian(right));
        return true;
    }

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output)
    {
        Span<byte> text = stackalloc byte[20];
        Utf8Formatter.TryFormat(BinaryPrimitives.ReadUInt64BigEndian(values[0]), text, out int length);
        output.Emit(key, text[..length]);
    }
}

/// <summary>The same job wrongly declaring its reduce the identity: its output must then differ from the reference.</summary>
public sealed class MisdeclaredFinalizingCountJob : FinalizingCountJob, IMapReduceJob
{
    public bool ReduceIsIdentity => true;
}
