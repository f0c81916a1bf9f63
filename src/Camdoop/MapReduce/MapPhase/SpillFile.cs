using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// One spill of the sort buffer: all buckets' sorted, combined records back to back in one temporary file, with
/// each bucket's byte range. Deleted on dispose.
/// </summary>
internal sealed class SpillFile : IBucketSink, IDisposable
{
    private readonly FileStream _file;
    private readonly long[] _start;
    private readonly byte[] _buffer = new byte[64 * 1024];
    private int _buffered;
    private long _length;
    private int _bucket = -1;

    public SpillFile(string path, int buckets)
    {
        Path = path;
        _start = new long[buckets + 1];
        _file = new FileStream(path, FileMode.Create, FileAccess.ReadWrite, FileShare.None, 1, FileOptions.DeleteOnClose);
    }

    public string Path { get; }

    public void BeginBucket(int bucket)
    {
        for (int b = _bucket + 1; b <= bucket; b++)
        {
            _start[b] = _length;
        }
        _bucket = bucket;
    }

    public void Write(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        int length = RecordCodec.EncodedLength(key.Length, value.Length);
        if (_buffered + length > _buffer.Length)
        {
            Flush();
        }
        if (length > _buffer.Length)
        {
            var record = new byte[length];
            RecordCodec.Write(record, key, value);
            _file.Write(record);
        }
        else
        {
            RecordCodec.Write(_buffer.AsSpan(_buffered), key, value);
            _buffered += length;
        }
        _length += length;
    }

    public void WriteEncoded(ReadOnlySpan<byte> record, int keyLength, int valueLength)
    {
        if (_buffered + record.Length > _buffer.Length)
        {
            Flush();
        }
        if (record.Length > _buffer.Length)
        {
            _file.Write(record);
        }
        else
        {
            record.CopyTo(_buffer.AsSpan(_buffered));
            _buffered += record.Length;
        }
        _length += record.Length;
    }

    public void EndBucket()
    {
    }

    /// <summary>Flushes and closes the remaining (empty) buckets; the file is then ready for reading.</summary>
    public void Complete()
    {
        Flush();
        for (int b = _bucket + 1; b < _start.Length; b++)
        {
            _start[b] = _length;
        }
        _file.Position = 0;
    }

    /// <summary>
    /// Reads the next bytes of <paramref name="bucket"/> (buckets are read in order, each exactly once); 0 at its end.
    /// </summary>
    public int ReadBucket(int bucket, Span<byte> destination)
    {
        long remaining = _start[bucket + 1] - _file.Position;
        if (_file.Position < _start[bucket])
        {
            _file.Position = _start[bucket];
            remaining = _start[bucket + 1] - _start[bucket];
        }
        int count = (int)Math.Min(remaining, destination.Length);
        return count <= 0 ? 0 : _file.ReadAtLeast(destination[..count], count);
    }

    public void Dispose() => _file.Dispose();

    private void Flush()
    {
        _file.Write(_buffer, 0, _buffered);
        _buffered = 0;
    }
}
