using Camdoop.Records;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// A growable, reusable buffer of encoded records. Also an <see cref="IRecordEmitter"/>, so a reducer or a test can
/// emit straight into it; every record is checked against <see cref="RecordLimits"/>.
/// </summary>
public sealed class RecordBuffer : IRecordEmitter
{
    private byte[] _buffer;
    private int _length;

    public RecordBuffer(int initialCapacity = 4096)
    {
        _buffer = new byte[Math.Max(16, initialCapacity)];
    }

    public int Length => _length;

    public long Records { get; private set; }

    /// <summary>Sum of key and value lengths of the records written.</summary>
    public long LogicalBytes { get; private set; }

    public ReadOnlySpan<byte> WrittenSpan => _buffer.AsSpan(0, _length);

    public ReadOnlyMemory<byte> WrittenMemory => _buffer.AsMemory(0, _length);

    public void Emit(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        RecordLimits.Check(key.Length, value.Length, "emitter");
        int needed = RecordCodec.EncodedLength(key.Length, value.Length);
        EnsureFree(needed);
        _length += RecordCodec.Write(_buffer.AsSpan(_length), key, value);
        Records++;
        LogicalBytes += key.Length + value.Length;
    }

    /// <summary>Appends bytes that are already a record stream (whole records).</summary>
    public void AppendEncoded(ReadOnlySpan<byte> records, long recordCount, long logicalBytes)
    {
        EnsureFree(records.Length);
        records.CopyTo(_buffer.AsSpan(_length));
        _length += records.Length;
        Records += recordCount;
        LogicalBytes += logicalBytes;
    }

    public byte[] ToArray() => _buffer.AsSpan(0, _length).ToArray();

    public void Clear()
    {
        _length = 0;
        Records = 0;
        LogicalBytes = 0;
    }

    private void EnsureFree(int needed)
    {
        if (_length + needed > _buffer.Length)
        {
            Array.Resize(ref _buffer, Math.Max(_buffer.Length * 2, _length + needed));
        }
    }
}
