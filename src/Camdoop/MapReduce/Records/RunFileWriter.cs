using Camdoop.Records;

namespace Camdoop.MapReduce.Records;

/// <summary>
/// Writes one run file: a placeholder header, the record stream, then the real header (counts and checksum are
/// known only at the end). Records must be appended in sorted order; the writer does not check it.
/// </summary>
public sealed class RunFileWriter : IDisposable
{
    private readonly FileStream _file;
    private readonly XxHash64 _checksum = new();
    private readonly byte[] _buffer;
    private readonly string _path;
    private readonly ulong _jobId;
    private readonly ulong _mapTaskId;
    private readonly int _reduceTask;
    private readonly int _stripe;
    private readonly bool _combined;
    private int _buffered;
    private long _records;
    private long _payloadBytes;
    private long _keyBytes;
    private long _valueBytes;
    private bool _completed;

    public RunFileWriter(string path, ulong jobId, ulong mapTaskId, int reduceTask, int stripe, bool combined, int bufferBytes = 64 * 1024)
    {
        _path = path;
        _jobId = jobId;
        _mapTaskId = mapTaskId;
        _reduceTask = reduceTask;
        _stripe = stripe;
        _combined = combined;
        _buffer = new byte[Math.Max(bufferBytes, RunHeader.Size)];
        _file = new FileStream(path, FileMode.Create, FileAccess.Write, FileShare.None, 1, FileOptions.None);
        _file.Write(new byte[RunHeader.Size]);
    }

    public string Path => _path;

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
            WritePayload(record);
        }
        else
        {
            _buffered += RecordCodec.Write(_buffer.AsSpan(_buffered), key, value);
        }
        _records++;
        _keyBytes += key.Length;
        _valueBytes += value.Length;
    }

    /// <summary>Appends bytes that already form whole records, with their totals.</summary>
    public void WriteEncoded(ReadOnlySpan<byte> records, long recordCount, long keyBytes, long valueBytes)
    {
        Flush();
        WritePayload(records);
        _records += recordCount;
        _keyBytes += keyBytes;
        _valueBytes += valueBytes;
    }

    /// <summary>Flushes the records, writes the header and closes the file; returns the header.</summary>
    public RunHeader Complete()
    {
        Flush();
        var header = new RunHeader(_jobId, _mapTaskId, _reduceTask, _stripe, _records, _payloadBytes, _keyBytes, _valueBytes,
            _checksum.GetDigest(), _combined);
        Span<byte> bytes = stackalloc byte[RunHeader.Size];
        header.Write(bytes);
        _file.Position = 0;
        _file.Write(bytes);
        _file.Dispose();
        _completed = true;
        return header;
    }

    public void Dispose()
    {
        if (!_completed)
        {
            // An abandoned run is deleted so no half-written file looks valid.
            _file.Dispose();
            File.Delete(_path);
            _completed = true;
        }
    }

    private void Flush()
    {
        if (_buffered > 0)
        {
            WritePayload(_buffer.AsSpan(0, _buffered));
            _buffered = 0;
        }
    }

    private void WritePayload(ReadOnlySpan<byte> bytes)
    {
        _checksum.Append(bytes);
        _file.Write(bytes);
        _payloadBytes += bytes.Length;
    }
}
