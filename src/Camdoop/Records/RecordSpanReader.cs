namespace Camdoop.Records;

/// <summary>
/// Walks the complete records at the start of a byte span (e.g. one frame payload). Stops at the first incomplete
/// record; <see cref="Consumed"/> says how many bytes were whole records, and the caller keeps the rest.
/// </summary>
public ref struct RecordSpanReader
{
    private readonly ReadOnlySpan<byte> _source;
    private int _offset;

    public RecordSpanReader(ReadOnlySpan<byte> source)
    {
        _source = source;
        _offset = 0;
        Status = RecordParseStatus.Incomplete;
    }

    /// <summary>Bytes of whole records read so far.</summary>
    public readonly int Consumed => _offset;

    /// <summary>Status of the last <see cref="TryRead"/>: Incomplete at a clean or partial end, Malformed on bad data.</summary>
    public RecordParseStatus Status { get; private set; }

    /// <summary>Reads the next complete record; false at the end of the complete records or on malformed data.</summary>
    public bool TryRead(out ReadOnlySpan<byte> key, out ReadOnlySpan<byte> value)
    {
        var rest = _source[_offset..];
        Status = RecordCodec.TryParse(rest, out var bounds);
        if (Status != RecordParseStatus.Complete)
        {
            key = default;
            value = default;
            return false;
        }
        key = rest.Slice(bounds.KeyOffset, bounds.KeyLength);
        value = rest.Slice(bounds.ValueOffset, bounds.ValueLength);
        _offset += bounds.Length;
        return true;
    }
}
