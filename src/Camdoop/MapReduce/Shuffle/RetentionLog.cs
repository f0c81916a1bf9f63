namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// Which bytes an <see cref="OutboundStream"/> keeps after its parent acknowledged them, so that when the parent is lost
/// its replacement can restart the stream from an earlier record without regenerating it (the Camdoop paper, §4.2):
/// from a record start (<see cref="From"/>) about <see cref="Bytes"/> before the acknowledged offset. The bytes
/// themselves stay in the stream's <see cref="SendBuffer"/>; this decides where they begin.
/// A mutable struct, held in a field of its stream and used in place.
/// </summary>
internal struct RetentionLog
{
    private RecordBoundaries _starts;

    public RetentionLog() => From = long.MaxValue;

    /// <summary>Bytes kept before the acknowledged offset (0: none).</summary>
    public long Bytes { get; private set; }

    /// <summary>The stream offset the kept bytes begin at, a record start (long.MaxValue: none kept).</summary>
    public long From { get; private set; }

    /// <summary>Record starts noted ahead of <see cref="From"/>, where it may move to.</summary>
    public readonly int Noted => _starts.Count;

    /// <summary>
    /// Keeps <paramref name="bytes"/> (0: none), from the stream's first byte until record starts are noted; nothing
    /// once the stream is <paramref name="complete"/>.
    /// </summary>
    public void Set(long bytes, bool complete)
    {
        Bytes = bytes;
        From = bytes > 0 && !complete ? Math.Min(From, 0) : long.MaxValue;
    }

    /// <summary>Notes that <paramref name="offset"/> is a record start. Sparse: one per 1/16 of what is kept, 4 KB at least.</summary>
    public void Note(long offset)
    {
        if (Bytes == 0)
        {
            return;
        }
        if (From == long.MaxValue)
        {
            // Nothing is kept (retention gave way to the window): keep again from here, which is not written yet.
            From = offset;
            _starts.NoteUsed(offset);
            return;
        }
        _starts.Note(offset, Math.Max(4096, Bytes / 16));
    }

    /// <summary>
    /// The stream's acknowledged offset moved to <paramref name="acked"/>: lets go of kept bytes more than
    /// <see cref="Bytes"/> before it.
    /// </summary>
    public void Advance(long acked, int maxWindow)
    {
        if (_starts.Count == 0)
        {
            return;
        }
        while (_starts.TryTakeOldest(acked - Bytes, out long start))
        {
            From = start;
        }
        if (From != long.MaxValue && acked - From > (2 * Bytes) + maxWindow)
        {
            // No record start was noted for too long: keep nothing until the next one rather than grow without bound.
            From = long.MaxValue;
            _starts.Clear();
        }
    }

    /// <summary>Keeps nothing any more (the stream is complete or dropped).</summary>
    public void Forget()
    {
        From = long.MaxValue;
        _starts.Clear();
    }

    /// <summary>The stream is regenerated from its offset 0: keep from there.</summary>
    public void Restart()
    {
        From = Bytes > 0 ? 0 : long.MaxValue;
        _starts.Reset();
    }

    /// <summary>
    /// <paramref name="offset"/> becomes offset 0 of a new epoch: keep from there unless <paramref name="fromStart"/> is
    /// false (a lent run, held whole anyway).
    /// </summary>
    public void Rebase(long offset, bool fromStart)
    {
        From = Bytes > 0 && fromStart ? 0 : long.MaxValue;
        _starts.Rebase(offset);
    }
}
