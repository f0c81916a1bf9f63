using Camdoop.Records;

namespace Camdoop.MapReduce.Merge;

/// <summary>
/// Output a <see cref="StreamMerger"/> produced that did not fit the caller's span: the rest of a record split across
/// Drain calls, or what a reduce function emitted past the span. Bytes leave in the order they came, and before
/// anything newer is emitted.
/// <para>
/// Invariants: the bytes held are [start, end) of the buffer; empty is start = end = 0, so an empty carry starts again
/// at the front; the buffer grows (or its bytes move to its front) only to take more bytes, never while they are
/// handed out.
/// </para>
/// </summary>
internal sealed class PendingOutput
{
    private byte[] _bytes = new byte[256];
    private int _start;
    private int _end;

    /// <summary>Bytes held.</summary>
    public int Count => _end - _start;

    public bool IsEmpty => _end == _start;

    /// <summary>Drops every byte held.</summary>
    public void Clear()
    {
        _start = 0;
        _end = 0;
    }

    /// <summary>Hands out as many bytes as fit <paramref name="output"/>, oldest first; returns how many.</summary>
    public int Flush(Span<byte> output)
    {
        int count = Math.Min(output.Length, _end - _start);
        if (count == 0)
        {
            return 0;
        }
        _bytes.AsSpan(_start, count).CopyTo(output);
        _start += count;
        if (_start == _end)
        {
            _start = 0;
            _end = 0;
        }
        return count;
    }

    /// <summary>Holds <paramref name="bytes"/> (an encoded record, or part of the stream) after those held.</summary>
    public void Add(ReadOnlySpan<byte> bytes)
    {
        EnsureRoom(bytes.Length);
        bytes.CopyTo(_bytes.AsSpan(_end));
        _end += bytes.Length;
    }

    /// <summary>Holds the record (<paramref name="key"/>, <paramref name="value"/>), encoded, after those held.</summary>
    public void AddRecord(ReadOnlySpan<byte> key, ReadOnlySpan<byte> value)
    {
        EnsureRoom(RecordCodec.EncodedLength(key.Length, value.Length));
        _end += RecordCodec.Write(_bytes.AsSpan(_end), key, value);
    }

    private void EnsureRoom(int count)
    {
        if (_end + count <= _bytes.Length)
        {
            return;
        }
        int live = _end - _start;
        if (live + count > _bytes.Length)
        {
            var bigger = new byte[Math.Max(_bytes.Length * 2, live + count)];
            _bytes.AsSpan(_start, live).CopyTo(bigger);
            _bytes = bigger;
        }
        else
        {
            _bytes.AsSpan(_start, live).CopyTo(_bytes);
        }
        _start = 0;
        _end = live;
    }
}
