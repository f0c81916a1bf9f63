using Camdoop.MapReduce.Buffers;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// The bytes of an <see cref="OutboundStream"/> up to <see cref="End"/>, in one linear buffer: rented from the
/// server's <see cref="ShuffleBufferPool"/> while the stream is active (compacted when what is no longer needed
/// outgrows the rest, grown on demand up to the window cap) and given back when idle; or a run its owner lent whole
/// (<see cref="Lend"/>: no copy, nothing to give back).
/// <para>
/// How much room it hands out follows a notional send buffer that holds only the bytes not yet acknowledged: it starts
/// small, doubles while small, then takes what the window allows at once, and is compacted when the acknowledged part
/// outgrows the rest. The real buffer also holds the bytes kept for a restart, so that keeping them changes memory,
/// never what is sent when.
/// </para>
/// A mutable struct, held in a field of its stream and used in place.
/// </summary>
internal struct SendBuffer
{
    private const int InitialBuffer = 512;

    // The buffer grows (or is compacted) only when less than this is left at its end.
    private const int MinDrain = 512;
    private const int GrowToWindowAbove = 16 * 1024;

    private readonly ShuffleBufferPool _pool;
    private readonly int _maxWindow;
    private byte[]? _buffer;
    private long _origin; // stream offset of _buffer[0]
    private long _end;
    private long _notionalOffset; // stream offset of the notional buffer's first byte
    private int _notional; // the notional buffer's length (0: none)
    private int _releasedLength; // the notional buffer's length when the real one was last given back
    private int _lentStart; // a lent run's first byte in _buffer
    private bool _lent;

    public SendBuffer(ShuffleBufferPool pool, int maxWindow)
    {
        _pool = pool;
        _maxWindow = maxWindow;
    }

    /// <summary>Bytes the owner has appended so far (the stream offset after the last).</summary>
    public readonly long End => _end;

    /// <summary>Whether the bytes are a run the owner lent.</summary>
    public readonly bool IsLent => _lent;

    /// <summary>Whether a buffer (rented or lent) holds bytes now.</summary>
    public readonly bool IsHeld => _buffer is not null;

    /// <summary>The stream offset of a lent run's first byte.</summary>
    public readonly long LentStart => _lentStart + _origin;

    /// <summary>The buffer (null when none is held) and the stream offset of its first byte, for a scan of the records.</summary>
    public readonly byte[]? Array => _buffer;

    public readonly long Origin => _origin;

    /// <summary>The <paramref name="length"/> bytes from stream offset <paramref name="from"/>, which are held.</summary>
    public readonly Span<byte> Slice(long from, int length) => _buffer.AsSpan((int)(from - _origin), length);

    /// <summary>The bytes from stream offset <paramref name="from"/> to <see cref="End"/>, which are held.</summary>
    public readonly Span<byte> From(long from) => _buffer.AsSpan((int)(from - _origin), (int)(_end - from));

    /// <summary>Lends an in-memory run as the whole stream.</summary>
    public void Lend(ReadOnlyMemory<byte> data)
    {
        if (_end != 0 || _buffer is not null)
        {
            throw new InvalidOperationException("the stream already has data");
        }
        if (!System.Runtime.InteropServices.MemoryMarshal.TryGetArray(data, out var segment))
        {
            throw new ArgumentException("external data must be array-backed", nameof(data));
        }
        _buffer = segment.Array;
        _origin = -segment.Offset;
        _lent = true;
        _lentStart = segment.Offset;
        _end = segment.Count;
    }

    /// <summary>
    /// Room for at most <paramref name="allowed"/> more bytes (commit with <see cref="Commit"/>). Bytes before
    /// <paramref name="keep"/> are no longer needed to send, but the real buffer holds those from
    /// <paramref name="keptFrom"/> on too; <paramref name="keeping"/> when the stream keeps bytes for a restart.
    /// </summary>
    public Span<byte> Space(long keep, long allowed, long keptFrom, bool keeping)
    {
        int live = (int)(_end - keep);
        int want = (int)Math.Min(allowed, int.MaxValue);
        if (_notional == 0)
        {
            // Start small: most streams at large R carry a few hundred bytes. Grow only when the buffer fills. A stream
            // that gave its buffer back between flights takes the size it grew to again rather than regrowing it.
            _notional = ShuffleBufferPool.SizeFor(Math.Min(want, Math.Max(InitialBuffer, _releasedLength)));
            _notionalOffset = keep;
        }
        int garbage = (int)(keep - _notionalOffset);
        int tail = _notional - garbage - live;
        int needed = Math.Min(want, MinDrain);
        if (tail < needed)
        {
            if (garbage > 0 && garbage >= live)
            {
                // Moving the live bytes costs no more than the room it wins.
                _notionalOffset = keep;
                garbage = 0;
                tail = _notional - live;
            }
            // The most a buffer needs: a full window plus a segment either side of it.
            int largest = _maxWindow + (2 * ShuffleWire.MaxSegmentBytes);
            if (tail < needed && _notional < largest)
            {
                // Double while small; a stream that outgrows 16 KB is a steady one: take what its window allows at once,
                // rather than leaving a trail of 32, 64 and 128 KB buffers behind (700 MB on an 8x8x8 R = 1 run).
                int grown = _notional < GrowToWindowAbove ? _notional * 2 : (int)Math.Min(live + want, largest);
                _notional = ShuffleBufferPool.SizeFor(Math.Max(grown, live + needed));
                _notionalOffset = keep;
                tail = _notional - live;
            }
        }
        int length = Math.Min(tail, want);
        return length <= 0 ? default : Room(Math.Min(keep, keptFrom), length, keeping);
    }

    /// <summary>
    /// The real buffer's room for <paramref name="length"/> more bytes, keeping everything from <paramref name="keep"/>
    /// on: compacted when that makes room, else grown (by half again at least while <paramref name="keeping"/>, so that
    /// kept bytes do not make it grow step by step).
    /// </summary>
    private Span<byte> Room(long keep, int length, bool keeping)
    {
        long need = _end + length - keep;
        if (_buffer is null)
        {
            _buffer = _pool.Rent((int)need);
            _origin = keep;
        }
        else if (_end + length - _origin > _buffer.Length)
        {
            int live = (int)(_end - keep);
            int garbage = (int)(keep - _origin);
            if (live + length <= _buffer.Length && garbage >= live)
            {
                Buffer.BlockCopy(_buffer, garbage, _buffer, 0, live);
            }
            else
            {
                var bigger = _pool.Rent((int)Math.Max(need, keeping ? _buffer.Length + (_buffer.Length / 2) : need));
                Buffer.BlockCopy(_buffer, garbage, bigger, 0, live);
                _pool.Return(_buffer);
                _buffer = bigger;
            }
            _origin = keep;
        }
        return _buffer.AsSpan((int)(_end - _origin), length);
    }

    /// <summary>The owner wrote <paramref name="count"/> bytes (above 0) into the room <see cref="Space"/> gave.</summary>
    public void Commit(int count)
    {
        if (_buffer is null || _lent || (_end - _origin) + count > _buffer.Length)
        {
            throw new InvalidOperationException("commit beyond the drain space");
        }
        _end += count;
    }

    /// <summary>
    /// Every byte is acknowledged: the notional buffer goes, and the real one back to the pool unless bytes from
    /// <paramref name="keptFrom"/> are kept.
    /// </summary>
    public void ReleaseIdle(long keptFrom)
    {
        if (_notional != 0)
        {
            _releasedLength = _notional;
            _notional = 0;
        }
        if (_buffer is not null && keptFrom >= _end)
        {
            _pool.Return(_buffer);
            _buffer = null;
        }
    }

    /// <summary>The stream is complete: a rented buffer goes back to the pool.</summary>
    public void Free()
    {
        if (_buffer is not null)
        {
            _pool.Return(_buffer);
        }
        _buffer = null;
        _notional = 0;
    }

    /// <summary>The stream is dropped: a rented buffer goes back to the pool, a lent run is let go.</summary>
    public void Drop()
    {
        if (_buffer is not null && !_lent)
        {
            _pool.Return(_buffer);
        }
        _buffer = null;
    }

    /// <summary>Drops every byte: the owner appends the stream again from its offset 0.</summary>
    public void Clear()
    {
        Drop();
        _lent = false;
        _lentStart = 0;
        _origin = 0;
        _end = 0;
        _notional = 0;
        _releasedLength = 0;
    }

    /// <summary>Makes <paramref name="offset"/> offset 0, keeping the bytes from there on.</summary>
    public void Rebase(long offset)
    {
        _origin -= offset;
        _end -= offset;
        _notional = 0;
        _releasedLength = 0;
    }
}
