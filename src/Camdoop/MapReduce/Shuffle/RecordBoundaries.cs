namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// Record starts the owner of an <see cref="OutboundStream"/> noted, oldest first, a spacing apart: the offsets its
/// kept bytes may begin at (<see cref="RetentionLog"/>), so that a restart from them begins with a whole record. At
/// most 16 are held: when full, the oldest gives way (what is kept then begins earlier, never later).
/// A mutable struct, held in a field and used in place.
/// </summary>
internal struct RecordBoundaries
{
    private const int Capacity = 16;
    private long[]? _ring; // allocated at the first record start noted
    private int _head;
    private int _count;
    private long _last;

    /// <summary>Record starts held.</summary>
    public readonly int Count => _count;

    /// <summary>Notes <paramref name="offset"/> unless it is less than <paramref name="spacing"/> past the last one noted.</summary>
    public void Note(long offset, long spacing)
    {
        if (offset - _last < spacing)
        {
            return;
        }
        var ring = _ring ??= new long[Capacity];
        if (_count == ring.Length)
        {
            // Full: the oldest noted start is the least useful; drop it (retention keeps more, never less).
            _head = (_head + 1) % ring.Length;
            _count--;
        }
        ring[(_head + _count) % ring.Length] = offset;
        _count++;
        _last = offset;
    }

    /// <summary>A record start used at once rather than held: the next is noted a spacing after it.</summary>
    public void NoteUsed(long offset) => _last = offset;

    /// <summary>Takes out the oldest record start if it is at or before <paramref name="limit"/>.</summary>
    public bool TryTakeOldest(long limit, out long start)
    {
        if (_count > 0 && _ring![_head] <= limit)
        {
            start = _ring[_head];
            _head = (_head + 1) % _ring.Length;
            _count--;
            return true;
        }
        start = 0;
        return false;
    }

    /// <summary>Forgets every record start held.</summary>
    public void Clear() => _count = 0;

    /// <summary>Forgets every record start: the stream starts again from its offset 0.</summary>
    public void Reset()
    {
        _count = 0;
        _last = 0;
    }

    /// <summary>Makes <paramref name="offset"/> offset 0: the starts after it move down, those at or before it go.</summary>
    public void Rebase(long offset)
    {
        int kept = 0;
        for (int i = 0; i < _count; i++)
        {
            long b = _ring![(_head + i) % _ring.Length] - offset;
            if (b > 0)
            {
                _ring[kept++] = b;
            }
        }
        _head = 0;
        _count = kept;
        _last = Math.Max(0, _last - offset);
    }
}
