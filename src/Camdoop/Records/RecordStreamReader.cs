namespace Camdoop.Records;

/// <summary>
/// Incremental reader of a record stream delivered in arbitrary chunks: <see cref="Append"/> bytes as they arrive,
/// then <see cref="TryRead"/> whole records. A record straddling chunks is kept until its last byte arrives.
/// The spans returned stay valid until the next <see cref="Append"/>.
/// </summary>
public sealed class RecordStreamReader
{
    private byte[] _buffer;
    private int _start;
    private int _end;

    public RecordStreamReader(int initialCapacity = 16 * 1024)
    {
        _buffer = new byte[Math.Max(16, initialCapacity)];
    }

    /// <summary>Bytes appended but not yet returned as records.</summary>
    public int BufferedBytes => _end - _start;

    public long RecordsRead { get; private set; }

    public void Append(ReadOnlySpan<byte> bytes)
    {
        if (_end + bytes.Length > _buffer.Length)
        {
            int live = _end - _start;
            if (live + bytes.Length > _buffer.Length)
            {
                var bigger = new byte[Math.Max(_buffer.Length * 2, live + bytes.Length)];
                _buffer.AsSpan(_start, live).CopyTo(bigger);
                _buffer = bigger;
            }
            else
            {
                _buffer.AsSpan(_start, live).CopyTo(_buffer);
            }
            _start = 0;
            _end = live;
        }
        bytes.CopyTo(_buffer.AsSpan(_end));
        _end += bytes.Length;
    }

    /// <summary>Returns the next whole record, or false when more bytes are needed. Throws on corrupt data.</summary>
    public bool TryRead(out ReadOnlySpan<byte> key, out ReadOnlySpan<byte> value)
    {
        var rest = _buffer.AsSpan(_start, _end - _start);
        switch (RecordCodec.TryParse(rest, out var bounds))
        {
            case RecordParseStatus.Complete:
                key = rest.Slice(bounds.KeyOffset, bounds.KeyLength);
                value = rest.Slice(bounds.ValueOffset, bounds.ValueLength);
                _start += bounds.Length;
                RecordsRead++;
                return true;
            case RecordParseStatus.Incomplete:
                key = default;
                value = default;
                return false;
            default:
                throw new InvalidDataException(
                    $"corrupt record stream after {RecordsRead} records: a record header announces lengths over the limits");
        }
    }

    /// <summary>Declares the end of the stream; throws when it stops in the middle of a record.</summary>
    public void Complete()
    {
        if (_end != _start)
        {
            throw new InvalidDataException(
                $"record stream ended in the middle of a record ({_end - _start} bytes left after {RecordsRead} records)");
        }
    }

    public void Reset()
    {
        _start = 0;
        _end = 0;
        RecordsRead = 0;
    }
}
