using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Reads the record stream of one run, block by block into the caller's buffer, from a run file or from an
/// in-memory map output. The payload checksum is checked as the bytes go by: the read that reaches the end throws
/// <see cref="CorruptRunFileException"/> on a mismatch (use <see cref="Open(string, bool)"/> with verify to check
/// the whole file before the first byte is handed out).
/// </summary>
public sealed class RunReader : IDisposable
{
    private readonly FileStream? _file;
    private readonly ReadOnlyMemory<byte> _memory;
    private readonly XxHash64 _checksum = new();
    private readonly string _source;
    private long _position;

    // Bytes already read (and checksummed) by SkipThrough that belong to the records after the skipped ones.
    private byte[] _pushback = [];
    private int _pushbackStart;
    private int _pushbackEnd;

    private RunReader(RunHeader header, FileStream? file, ReadOnlyMemory<byte> memory, string source)
    {
        Header = header;
        _file = file;
        _memory = memory;
        _source = source;
    }

    public RunHeader Header { get; }

    /// <summary>Payload bytes not yet read.</summary>
    public long Remaining => Header.PayloadBytes - _position + (_pushbackEnd - _pushbackStart);

    public bool IsAtEnd => Remaining == 0;

    /// <summary>Opens a run file and validates its header and length; with <paramref name="verify"/> also its checksum.</summary>
    public static RunReader Open(string path, bool verify = false)
    {
        if (verify)
        {
            Verify(path);
        }
        var file = new FileStream(path, FileMode.Open, FileAccess.Read, FileShare.Read, 1, FileOptions.SequentialScan);
        try
        {
            Span<byte> bytes = stackalloc byte[RunHeader.Size];
            int read = file.ReadAtLeast(bytes, RunHeader.Size, throwOnEndOfStream: false);
            var header = RunHeader.Read(bytes[..read], path);
            if (file.Length != RunHeader.Size + header.PayloadBytes)
            {
                throw new CorruptRunFileException(path,
                    $"file has {file.Length - RunHeader.Size} payload bytes, header says {header.PayloadBytes}");
            }
            return new RunReader(header, file, default, path);
        }
        catch
        {
            file.Dispose();
            throw;
        }
    }

    /// <summary>A reader over an in-memory run payload (same interface as a file).</summary>
    public static RunReader FromMemory(RunHeader header, ReadOnlyMemory<byte> payload, string source = "memory")
    {
        if (payload.Length != header.PayloadBytes)
        {
            throw new ArgumentException($"payload has {payload.Length} bytes, header says {header.PayloadBytes}", nameof(payload));
        }
        return new RunReader(header, null, payload, source);
    }

    /// <summary>Reads the whole file once and checks header, length and payload checksum; returns the header.</summary>
    public static RunHeader Verify(string path)
    {
        using var reader = Open(path);
        var block = new byte[64 * 1024];
        while (reader.Read(block) > 0)
        {
        }
        return reader.Header;
    }

    /// <summary>
    /// Before the first <see cref="Read"/>: skips every record whose key is at most <paramref name="lastKey"/>
    /// (recovery, the Camdoop paper, §4.2: a replacement source resends only the keys after the last one its parent
    /// incorporated). Reading then starts at the first record after it. Returns the number of records skipped.
    /// </summary>
    public long SkipThrough(ReadOnlySpan<byte> lastKey, Jobs.IKeyComparer? comparer = null)
    {
        if (_position != 0)
        {
            throw new InvalidOperationException("SkipThrough must come before the first Read");
        }
        var buffer = new byte[64 * 1024];
        int start = 0, end = 0;
        long skipped = 0;
        while (true)
        {
            var status = RecordCodec.TryParse(buffer.AsSpan(start, end - start), out var bounds);
            if (status == RecordParseStatus.Complete)
            {
                var key = buffer.AsSpan(start + bounds.KeyOffset, bounds.KeyLength);
                int order = comparer is null ? key.SequenceCompareTo(lastKey) : comparer.Compare(key, lastKey);
                if (order > 0)
                {
                    break;
                }
                start += bounds.Length;
                skipped++;
                continue;
            }
            if (status == RecordParseStatus.Malformed)
            {
                throw new CorruptRunFileException(_source, "malformed record");
            }
            if (RawRemaining == 0)
            {
                if (end != start)
                {
                    throw new CorruptRunFileException(_source, "the payload ends in the middle of a record");
                }
                break;
            }
            // Keep the partial record; make room (a record can be up to RecordLimits.MaxRecordBytes).
            Buffer.BlockCopy(buffer, start, buffer, 0, end - start);
            end -= start;
            start = 0;
            if (end == buffer.Length)
            {
                Array.Resize(ref buffer, buffer.Length * 2);
            }
            end += ReadRaw(buffer.AsSpan(end));
        }
        _pushback = buffer;
        _pushbackStart = start;
        _pushbackEnd = end;
        return skipped;
    }

    /// <summary>Copies up to <paramref name="destination"/>.Length payload bytes; returns 0 at the end.</summary>
    public int Read(Span<byte> destination)
    {
        if (_pushbackEnd > _pushbackStart)
        {
            int count = Math.Min(destination.Length, _pushbackEnd - _pushbackStart);
            _pushback.AsSpan(_pushbackStart, count).CopyTo(destination);
            _pushbackStart += count;
            return count;
        }
        return ReadRaw(destination);
    }

    private long RawRemaining => Header.PayloadBytes - _position;

    private int ReadRaw(Span<byte> destination)
    {
        int count = (int)Math.Min(destination.Length, RawRemaining);
        if (count == 0)
        {
            return 0;
        }
        var target = destination[..count];
        if (_file is null)
        {
            _memory.Span.Slice((int)_position, count).CopyTo(target);
        }
        else
        {
            int read = _file.ReadAtLeast(target, count, throwOnEndOfStream: false);
            if (read != count)
            {
                throw new CorruptRunFileException(_source, "file was truncated while reading");
            }
        }
        _checksum.Append(target);
        _position += count;
        if (RawRemaining == 0 && _checksum.GetDigest() != Header.PayloadChecksum)
        {
            throw new CorruptRunFileException(_source, "payload checksum mismatch");
        }
        return count;
    }

    public void Dispose() => _file?.Dispose();
}
