using Camdoop.MapReduce.Jobs;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Splits a map task's input into records: text lines ('\n'-terminated, trailing '\r' removed, a last line without
/// '\n' included) or fixed-size records. Reads a stream block by block, or walks an in-memory input without copying.
/// </summary>
internal sealed class InputSplitter
{
    private const int BlockBytes = 1024 * 1024;

    private readonly Stream? _stream;
    private readonly InputFormat _format;
    private byte[] _buffer;
    private int _start;
    private int _end;
    private bool _endOfInput;

    public InputSplitter(Stream stream, InputFormat format)
    {
        _stream = stream;
        _format = format;
        _buffer = new byte[Math.Max(BlockBytes, format.RecordSize)];
    }

    public InputSplitter(ArraySegment<byte> input, InputFormat format)
    {
        _format = format;
        _buffer = input.Array ?? [];
        _start = input.Offset;
        _end = input.Offset + input.Count;
        _endOfInput = true;
    }

    public long BytesRead { get; private set; }

    public long Records { get; private set; }

    /// <summary>The next record, or false at the end of the input. The span is valid until the next call.</summary>
    public bool TryNext(out ReadOnlySpan<byte> record)
    {
        while (true)
        {
            var available = _buffer.AsSpan(_start, _end - _start);
            if (_format.Kind == InputKind.FixedRecords)
            {
                int size = _format.RecordSize;
                if (available.Length >= size)
                {
                    record = available[..size];
                    Consume(size);
                    return true;
                }
                if (_endOfInput)
                {
                    if (available.Length > 0)
                    {
                        throw new InvalidDataException(
                            $"input ends with a partial record: {available.Length} bytes after {Records} whole {size}-byte records");
                    }
                    record = default;
                    return false;
                }
            }
            else
            {
                int newline = available.IndexOf((byte)'\n');
                if (newline >= 0 || (_endOfInput && available.Length > 0))
                {
                    int length = newline >= 0 ? newline : available.Length;
                    if (length > InputFormat.MaxLineBytes)
                    {
                        throw LineTooLong();
                    }
                    record = available[..length];
                    if (length > 0 && record[length - 1] == (byte)'\r')
                    {
                        record = record[..(length - 1)];
                    }
                    Consume(newline >= 0 ? length + 1 : length);
                    return true;
                }
                if (_endOfInput)
                {
                    record = default;
                    return false;
                }
                if (available.Length > InputFormat.MaxLineBytes)
                {
                    throw LineTooLong();
                }
            }
            Refill();
        }
    }

    private void Consume(int count)
    {
        _start += count;
        BytesRead += count;
        Records++;
    }

    private void Refill()
    {
        int live = _end - _start;
        if (live == _buffer.Length)
        {
            Array.Resize(ref _buffer, Math.Min(_buffer.Length * 2, InputFormat.MaxLineBytes + 2));
        }
        Buffer.BlockCopy(_buffer, _start, _buffer, 0, live);
        _start = 0;
        _end = live;
        int read = _stream!.Read(_buffer, _end, _buffer.Length - _end);
        if (read == 0)
        {
            _endOfInput = true;
        }
        _end += read;
    }

    private InvalidDataException LineTooLong() =>
        new($"input line {Records + 1} is longer than {InputFormat.MaxLineBytes} bytes");
}
