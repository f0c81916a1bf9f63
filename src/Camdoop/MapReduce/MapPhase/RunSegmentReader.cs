using Camdoop.MapReduce.Records;
using Camdoop.Records;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Reads the record stream of one run (a segment of an <see cref="IndexedRunFile"/>, or an in-memory map output),
/// block by block into the caller's buffer. The payload checksum is checked as the bytes go by: the read that
/// reaches the end throws <see cref="CorruptRunFileException"/> on a mismatch.
/// </summary>
public sealed class RunSegmentReader : IDisposable
{
    private readonly IndexedRunFile? _file;
    private readonly long _fileOffset;
    private readonly ReadOnlyMemory<byte> _memory;
    private readonly XxHash64 _checksum = new();
    private readonly string _source;
    private long _position;

    private RunSegmentReader(RunHeader header, IndexedRunFile? file, long fileOffset, ReadOnlyMemory<byte> memory, string source)
    {
        Header = header;
        _file = file;
        _fileOffset = fileOffset;
        _memory = memory;
        _source = source;
    }

    public RunHeader Header { get; }

    /// <summary>Payload bytes not yet read.</summary>
    public long Remaining => Header.PayloadBytes - _position;

    public bool IsAtEnd => _position == Header.PayloadBytes;

    internal static RunSegmentReader FromFile(IndexedRunFile file, int bucket) =>
        new(file.Header(bucket), file, file.PayloadOffset(bucket), default, file.Path);

    public static RunSegmentReader FromMemory(RunHeader header, ReadOnlyMemory<byte> payload, string source = "memory")
    {
        if (payload.Length != header.PayloadBytes)
        {
            throw new ArgumentException($"payload has {payload.Length} bytes, header says {header.PayloadBytes}", nameof(payload));
        }
        return new RunSegmentReader(header, null, 0, payload, source);
    }

    /// <summary>Copies up to <paramref name="destination"/>.Length payload bytes; returns 0 at the end.</summary>
    public int Read(Span<byte> destination)
    {
        int count = (int)Math.Min(destination.Length, Remaining);
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
            IndexedRunFile.ReadExactly(_file.Handle, target, _fileOffset + _position, _source);
        }
        _checksum.Append(target);
        _position += count;
        if (IsAtEnd && _checksum.GetDigest() != Header.PayloadChecksum)
        {
            throw new CorruptRunFileException(_source, $"payload checksum mismatch in run ({Header.ReduceTask}, {Header.Stripe})");
        }
        return count;
    }

    /// <summary>Reads the rest of the segment, checking its checksum; returns the header.</summary>
    public RunHeader VerifyToEnd()
    {
        var block = new byte[64 * 1024];
        while (Read(block) > 0)
        {
        }
        return Header;
    }

    /// <summary>Nothing to release: file readers share their run file's handle.</summary>
    public void Dispose()
    {
    }
}
