using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Merge;

namespace Camdoop.MapReduce.Vertices;

/// <summary>
/// One local map task's run of (reduce task, stripe): the leaf child of the vertex on the same server (paper §4.1:
/// map outputs are read from local disk, never from the network). Hands its bytes over in memory, block by block:
/// straight from an in-memory map output, or read from the task's indexed run file.
/// </summary>
public sealed class LocalRun
{
    private readonly ReadOnlyMemory<byte> _memory;
    private readonly bool _inMemory;
    private RunSegmentReader? _reader;
    private byte[]? _block;
    private long _position;

    public LocalRun(MapOutput output, int reduceTask, int stripe)
    {
        ArgumentNullException.ThrowIfNull(output);
        Length = output.Header(reduceTask, stripe).PayloadBytes;
        _inMemory = output.InMemory;
        if (_inMemory)
        {
            _memory = output.Payload(reduceTask, stripe);
        }
        else if (Length > 0)
        {
            _reader = output.OpenRun(reduceTask, stripe);
        }
    }

    public long Length { get; }

    public bool IsEmpty => Length == 0;

    public bool InMemory => _inMemory;

    /// <summary>The whole run, for a leaf that sends it as is (in-memory runs only).</summary>
    public ReadOnlyMemory<byte> Memory => _memory;

    public bool IsAtEnd => _position == Length;

    /// <summary>Bytes handed over so far.</summary>
    public long Position => _position;

    /// <summary>Appends the next block to merger input <paramref name="input"/>, or finishes it at the end. Returns bytes fed.</summary>
    public int Feed(StreamMerger merger, int input, int blockBytes)
    {
        if (IsAtEnd)
        {
            merger.Finish(input);
            Release();
            return 0;
        }
        int count = (int)Math.Min(blockBytes, Length - _position);
        if (_reader is null)
        {
            merger.Append(input, _memory.Span.Slice((int)_position, count));
        }
        else
        {
            _block ??= new byte[blockBytes];
            count = _reader.Read(_block.AsSpan(0, Math.Min(count, _block.Length)));
            merger.Append(input, _block.AsSpan(0, count));
        }
        _position += count;
        return count;
    }

    /// <summary>Copies the next bytes into <paramref name="destination"/> (a leaf streaming a run from disk). Returns bytes copied.</summary>
    public int Read(Span<byte> destination)
    {
        int count = (int)Math.Min(destination.Length, Length - _position);
        if (count == 0)
        {
            return 0;
        }
        if (_reader is null)
        {
            _memory.Span.Slice((int)_position, count).CopyTo(destination);
        }
        else
        {
            count = _reader.Read(destination[..count]);
        }
        _position += count;
        if (IsAtEnd)
        {
            Release();
        }
        return count;
    }

    private void Release()
    {
        _reader?.Dispose();
        _reader = null;
        _block = null;
    }
}
