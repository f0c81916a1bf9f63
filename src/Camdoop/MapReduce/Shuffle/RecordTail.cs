using Camdoop.Records;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// Follows the records of a received stream as its bytes arrive, keeping what failure recovery needs to know about
/// its end: the last complete record's key, how many records in a row had that key, and where the last complete
/// record ends. A parent that loses the child asks its replacement for the records after exactly that point
/// (<see cref="ResumePoint"/>). Records may straddle the pieces fed; the part of one not yet complete is kept.
/// </summary>
public sealed class RecordTail
{
    private byte[] _lastKey = new byte[32];
    private int _lastKeyLength;
    private uint _run;
    private byte[]? _partial;
    private int _partialLength;

    /// <summary>Whether a complete record has been seen.</summary>
    public bool HasRecord { get; private set; }

    /// <summary>Stream offset just past the last complete record (0 before the first).</summary>
    public long CompleteEnd { get; private set; }

    /// <summary>The key of the last complete record.</summary>
    public ReadOnlySpan<byte> LastKey => _lastKey.AsSpan(0, _lastKeyLength);

    /// <summary>How many complete records in a row, ending with the last one, had <see cref="LastKey"/>.</summary>
    public uint LastKeyRun => _run;

    /// <summary>The point after everything complete held so far.</summary>
    public ResumePoint Point => HasRecord ? ResumePoint.After(LastKey, _run) : ResumePoint.Start;

    /// <summary>Takes the stream's next bytes (they follow the previous ones directly).</summary>
    public void Feed(ReadOnlySpan<byte> bytes)
    {
        if (_partialLength > 0)
        {
            bytes = CompletePartial(bytes);
        }
        while (!bytes.IsEmpty)
        {
            var status = RecordCodec.TryParse(bytes, out var bounds);
            if (status == RecordParseStatus.Malformed)
            {
                throw new InvalidDataException("a corrupt record stream: a header announces lengths over the limits");
            }
            if (status == RecordParseStatus.Incomplete)
            {
                KeepPartial(bytes);
                return;
            }
            OnRecord(bytes.Slice(bounds.KeyOffset, bounds.KeyLength), bounds.Length);
            bytes = bytes[bounds.Length..];
        }
    }

    /// <summary>Forgets everything (the stream starts again from nothing).</summary>
    public void Clear()
    {
        HasRecord = false;
        CompleteEnd = 0;
        _run = 0;
        _lastKeyLength = 0;
        _partialLength = 0;
    }

    private ReadOnlySpan<byte> CompletePartial(ReadOnlySpan<byte> bytes)
    {
        // Grow the partial record a byte range at a time until it parses whole.
        while (true)
        {
            var held = _partial.AsSpan(0, _partialLength);
            var status = RecordCodec.TryParse(held, out var bounds);
            if (status == RecordParseStatus.Malformed)
            {
                throw new InvalidDataException("a corrupt record stream: a header announces lengths over the limits");
            }
            int need = status == RecordParseStatus.Complete ? 0 : status == RecordParseStatus.Incomplete && bounds.Length > _partialLength
                ? bounds.Length - _partialLength
                : 1;
            if (status == RecordParseStatus.Complete)
            {
                OnRecord(held.Slice(bounds.KeyOffset, bounds.KeyLength), bounds.Length);
                _partialLength = 0;
                return bytes;
            }
            if (bytes.IsEmpty)
            {
                return bytes;
            }
            int take = Math.Min(need, bytes.Length);
            Append(bytes[..take]);
            bytes = bytes[take..];
        }
    }

    private void KeepPartial(ReadOnlySpan<byte> bytes)
    {
        _partialLength = 0;
        Append(bytes);
    }

    private void Append(ReadOnlySpan<byte> bytes)
    {
        if (_partial is null || _partial.Length < _partialLength + bytes.Length)
        {
            var bigger = new byte[Math.Max(64, Math.Max((_partial?.Length ?? 0) * 2, _partialLength + bytes.Length))];
            _partial?.AsSpan(0, _partialLength).CopyTo(bigger);
            _partial = bigger;
        }
        bytes.CopyTo(_partial.AsSpan(_partialLength));
        _partialLength += bytes.Length;
    }

    private void OnRecord(ReadOnlySpan<byte> key, int length)
    {
        CompleteEnd += length;
        if (HasRecord && key.SequenceEqual(LastKey))
        {
            _run++;
            return;
        }
        if (_lastKey.Length < key.Length)
        {
            _lastKey = new byte[Math.Max(key.Length, _lastKey.Length * 2)];
        }
        key.CopyTo(_lastKey);
        _lastKeyLength = key.Length;
        _run = 1;
        HasRecord = true;
    }
}
