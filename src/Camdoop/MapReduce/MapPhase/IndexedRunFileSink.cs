using System.Buffers.Binary;
using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>Writes every bucket as a segment of one <see cref="IndexedRunFile"/>, then its index and trailer.</summary>
internal sealed class IndexedRunFileSink : IBucketSink, IDisposable
{
    private readonly FileStream _file;
    private readonly string _path;
    private readonly ulong _jobId;
    private readonly ulong _mapTaskId;
    private readonly bool _combined;
    private readonly int _reduceTasks;
    private readonly long[] _offsets;
    private readonly byte[] _buffer = new byte[64 * 1024];
    private readonly XxHash64 _checksum = new();
    private int _buffered;
    private int _bucket = -1;
    private bool _open;
    private long _payloadBytes;
    private bool _completed;

    public IndexedRunFileSink(string directory, int reduceTasks, ulong jobId, ulong mapTaskId, bool combined)
    {
        Directory.CreateDirectory(directory);
        _path = RunFileLayout.RunFilePath(directory);
        _reduceTasks = reduceTasks;
        _jobId = jobId;
        _mapTaskId = mapTaskId;
        _combined = combined;
        int buckets = reduceTasks * Stripes.Count;
        _offsets = new long[buckets];
        Headers = new RunHeader[buckets];
        Counters = new BucketCounters(buckets);
        _file = new FileStream(_path, FileMode.Create, FileAccess.Write, FileShare.None, 1, FileOptions.None);
    }

    public string Path => _path;

    public RunHeader[] Headers { get; }

    public BucketCounters Counters { get; }

    public void BeginBucket(int bucket)
    {
        // Empty buckets still get a (header-only) segment: every leaf has a stream to send and end.
        for (int b = _bucket + 1; b < bucket; b++)
        {
            Open(b);
            EndBucket();
        }
        Open(bucket);
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
            WritePayload(record);
        }
        else
        {
            _buffered += RecordCodec.Write(_buffer.AsSpan(_buffered), key, value);
        }
        Counters.Add(key.Length, value.Length, length);
    }

    public void WriteEncoded(ReadOnlySpan<byte> record, int keyLength, int valueLength)
    {
        if (_buffered + record.Length > _buffer.Length)
        {
            Flush();
        }
        if (record.Length > _buffer.Length)
        {
            WritePayload(record);
        }
        else
        {
            ShortCopy.Copy(record, _buffer.AsSpan(_buffered));
            _buffered += record.Length;
        }
        Counters.Add(keyLength, valueLength, record.Length);
    }

    public void EndBucket()
    {
        Flush();
        var c = Counters;
        var header = new RunHeader(_jobId, _mapTaskId, _bucket / Stripes.Count, _bucket % Stripes.Count, c.OpenRecords, _payloadBytes,
            c.OpenKeyBytes, c.OpenValueBytes, _checksum.GetDigest(), _combined);
        c.Close();
        Span<byte> bytes = stackalloc byte[RunHeader.Size];
        header.Write(bytes);
        long end = _file.Position;
        _file.Position = _offsets[_bucket];
        _file.Write(bytes);
        _file.Position = end;
        Headers[_bucket] = header;
        _open = false;
    }

    /// <summary>Closes the remaining (empty) buckets, writes index and trailer, and closes the file.</summary>
    public void Complete()
    {
        for (int b = _bucket + 1; b < Headers.Length; b++)
        {
            Open(b);
            EndBucket();
        }
        var index = new byte[8 * _offsets.Length];
        for (int b = 0; b < _offsets.Length; b++)
        {
            BinaryPrimitives.WriteInt64BigEndian(index.AsSpan(8 * b), _offsets[b]);
        }
        long indexOffset = _file.Position;
        _file.Write(index);
        Span<byte> trailer = stackalloc byte[IndexedRunFile.TrailerSize];
        trailer.Clear();
        BinaryPrimitives.WriteUInt32BigEndian(trailer, IndexedRunFile.TrailerMagic);
        BinaryPrimitives.WriteUInt16BigEndian(trailer[4..], IndexedRunFile.Version);
        BinaryPrimitives.WriteInt32BigEndian(trailer[8..], _offsets.Length);
        BinaryPrimitives.WriteInt32BigEndian(trailer[12..], _reduceTasks);
        BinaryPrimitives.WriteInt64BigEndian(trailer[16..], indexOffset);
        BinaryPrimitives.WriteUInt64BigEndian(trailer[24..], XxHash64.Hash(index));
        BinaryPrimitives.WriteUInt64BigEndian(trailer[32..], XxHash64.Hash(trailer[..32]));
        _file.Write(trailer);
        _file.Dispose();
        _completed = true;
    }

    public void Dispose()
    {
        if (!_completed)
        {
            // An abandoned file is deleted so no half-written output looks valid.
            _file.Dispose();
            File.Delete(_path);
            _completed = true;
        }
    }

    private void Open(int bucket)
    {
        if (_open)
        {
            throw new InvalidOperationException("a bucket is already open");
        }
        _bucket = bucket;
        _open = true;
        _offsets[bucket] = _file.Position;
        _file.Write(new byte[RunHeader.Size]);
        _checksum.Reset();
        Counters.Open(bucket);
        _payloadBytes = 0;
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
