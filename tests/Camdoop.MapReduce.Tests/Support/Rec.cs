using System.Text;
using Camdoop.MapReduce.Jobs;
using Camdoop.Records;

namespace Camdoop.MapReduce.Tests.Support;

/// <summary>A record as two byte arrays, with helpers to encode and decode record streams in tests.</summary>
public readonly record struct Rec(byte[] Key, byte[] Value)
{
    public static Rec Of(string key, ulong value)
    {
        var v = new byte[8];
        System.Buffers.Binary.BinaryPrimitives.WriteUInt64BigEndian(v, value);
        return new Rec(Encoding.ASCII.GetBytes(key), v);
    }

    public static byte[] Encode(IEnumerable<Rec> records)
    {
        var buffer = new RecordBuffer();
        foreach (var r in records)
        {
            buffer.Emit(r.Key, r.Value);
        }
        return buffer.ToArray();
    }

    public static List<Rec> Decode(ReadOnlySpan<byte> stream)
    {
        var list = new List<Rec>();
        var reader = new RecordSpanReader(stream);
        while (reader.TryRead(out var key, out var value))
        {
            list.Add(new Rec(key.ToArray(), value.ToArray()));
        }
        Assert.Equal(stream.Length, reader.Consumed);
        return list;
    }

    public static int CompareKeyValue(Rec a, Rec b)
    {
        int c = a.Key.AsSpan().SequenceCompareTo(b.Key);
        return c != 0 ? c : a.Value.AsSpan().SequenceCompareTo(b.Value);
    }

    public bool Equals(Rec other) => Key.AsSpan().SequenceEqual(other.Key) && Value.AsSpan().SequenceEqual(other.Value);

    public override int GetHashCode() => HashCode.Combine(Key.Length, Value.Length);

    public override string ToString() => $"{Convert.ToHexString(Key)}={Convert.ToHexString(Value)}";
}
