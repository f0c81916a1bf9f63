using System.Runtime.CompilerServices;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Buffers;
using Camdoop.MapReduce.Records;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// The sending half of one stream (job, reduce task, tree, child vertex) to the parent vertex: a byte stream with
/// reliable in-order delivery. The owner appends record-stream bytes (a vertex drains its merger into
/// <see cref="DrainSpace"/>, or a leaf lends its whole in-memory run); the port scheduler cuts segments
/// (<see cref="WriteSegment"/>); cumulative acks (<see cref="OnAck"/>) free the buffer and move the window.
/// Loss recovery is go-back-N from the acknowledged offset: on a Gap ack at once (fast retransmit), else when the
/// port's retransmission timer finds the stream without progress for an RTO. A closed window is probed.
/// <para>
/// Buffering: bytes [acked, end) live in one linear buffer rented from the array pool while the stream is active
/// (compacted when the acknowledged prefix outgrows the live part, grown on demand up to the window cap) and
/// returned when the FIN is acknowledged. The owner may run at most one segment ahead of the window.
/// </para>
/// </summary>
public sealed class OutboundStream
{
    private const int InitialBuffer = 512;

    // The buffer grows (or is compacted) only when less than this is left at its end.
    private const int MinDrain = 512;
    private const int GrowToWindowAbove = 16 * 1024;

    private int _releasedLength; // length of the buffer last given back while the stream goes on

    private byte[]? _buffer;
    private long _bufferOffset; // stream offset of _buffer[0]
    private bool _external;

    private long _acked;
    private long _sent;
    private long _sentHigh;
    private long _end;
    private bool _sourceDone;
    private bool _finSent;
    private long _edge;
    private long _recover;
    private readonly int _maxWindow;

    private long _rttOffset = -1;
    private bool _probedSinceProgress;
    private long _rttTime;

    // Priority walker: the first record starting at or after _sentHigh, and its key prefix.
    private long _walk;
    private ulong _walkPrefix;
    private long _walkPrefixAt = -1; // the offset _walkPrefix was read at

    private readonly ShuffleBufferPool _pool;

    public OutboundStream(ulong jobId, int reduceTask, int tree, Coordinate child, Key destination, Port port, int initialWindow, int maxWindow, ShuffleBufferPool pool)
    {
        _pool = pool;
        JobId = jobId;
        ReduceTask = reduceTask;
        Tree = tree;
        Child = child;
        Destination = destination;
        Port = port;
        _edge = initialWindow;
        _maxWindow = maxWindow;
    }

    public ulong JobId { get; }

    public int ReduceTask { get; }

    public int Tree { get; }

    /// <summary>The sending vertex's coordinate (its vertex id's top bits).</summary>
    public Coordinate Child { get; }

    /// <summary>The parent's vertex id: frames are key-routed to its current owner.</summary>
    public Key Destination { get; }

    /// <summary>The port whose scheduler sends this stream (the route's first hop).</summary>
    public Port Port { get; internal set; }

    /// <summary>Bytes the owner has appended so far.</summary>
    public long End => _end;

    public long Acknowledged => _acked;

    public long SentHigh => _sentHigh;

    public bool SourceDone => _sourceDone;

    /// <summary>The parent holds every byte and the FIN: the stream is done and its buffer released.</summary>
    public bool IsComplete { get; private set; }

    /// <summary>
    /// Set (before any data) when this stream competes with others of its job on its port, so its next key is tracked.
    /// </summary>
    public bool TracksPriority
    {
        get => _tracksPriority;
        set
        {
            Changed();
            _tracksPriority = value;
        }
    }

    /// <summary>Last time the stream made progress (ack or window advanced, or a new flight started).</summary>
    public long LastProgress { get; private set; }

    /// <summary>Consecutive timeouts without progress (the RTO doubles each time).</summary>
    public int Backoff { get; private set; }

    // Scheduler bookkeeping.
    internal PortScheduler.JobQueue? Queue;
    internal int ReadyIndex = -1; // its place in Queue.Ready, -1 when not in it
    internal bool InWatchList;
    private bool _tracksPriority;
    private bool _probeDue;

    /// <summary>A probe is to go (the window stayed closed): set by the scheduler's timer, cleared when sent.</summary>
    internal bool ProbeDue
    {
        get => _probeDue;
        set
        {
            Changed();
            _probeDue = value;
        }
    }

    /// <summary>
    /// Whatever may change what the scheduler reads of this stream (sendable bytes, next key, probe) first calls this:
    /// the scheduler's record of it, kept between frames, is no longer true (<see cref="PortScheduler"/>).
    /// </summary>
    private void Changed()
    {
        if (ReadyIndex >= 0)
        {
            Queue!.Recorded[ReadyIndex] = false;
        }
    }

    internal bool InReadyList => ReadyIndex >= 0;

    /// <summary>The next offset a segment would start at.</summary>
    public long SendOffset => _sent;

    /// <summary>Bytes not yet acknowledged, in flight or waiting.</summary>
    public long Unacknowledged => _end - _acked;

    /// <summary>Bytes sent (at least once) and not acknowledged, or an unacknowledged FIN.</summary>
    public bool HasInFlight => _sentHigh > _acked || (_finSent && !IsComplete);

    /// <summary>Bytes a segment could carry now (inside the window).</summary>
    public long SendableBytes => IsComplete ? 0 : Math.Max(0, Math.Min(_end, _edge) - _sent);

    /// <summary>The FIN could go now (everything else sent).</summary>
    public bool FinPending => !IsComplete && _sourceDone && !_finSent && _sent == _end;

    /// <summary>Whether a segment could go out now: data inside the window, or the FIN.</summary>
    public bool HasSendable => !IsComplete && (_sent < Math.Min(_end, _edge) || (_sourceDone && !_finSent && _sent == _end));

    /// <summary>Data waits but the window is closed and nothing is in flight: only a probe can reopen it if an update was lost.</summary>
    public bool IsWindowBlocked => !IsComplete && !HasInFlight && _sent < _end && _sent >= _edge;

    /// <summary>
    /// Key prefix of the next record to send (the lowest key first across streams keeps reducers from stalling).
    /// Maintained only when <see cref="TracksPriority"/>.
    /// </summary>
    public ulong NextKeyPrefix
    {
        get
        {
            RefreshPrefix();
            return _walkPrefix;
        }
    }

    /// <summary>Lends an in-memory run as the whole stream (no copy, nothing to release): a leaf with one local run.</summary>
    public void UseExternal(ReadOnlyMemory<byte> data)
    {
        Changed();
        if (_end != 0 || _buffer is not null)
        {
            throw new InvalidOperationException("the stream already has data");
        }
        if (!System.Runtime.InteropServices.MemoryMarshal.TryGetArray(data, out var segment))
        {
            throw new ArgumentException("external data must be array-backed", nameof(data));
        }
        _buffer = segment.Array;
        _bufferOffset = -segment.Offset;
        _external = true;
        _end = segment.Count;
        _sourceDone = true;
    }

    /// <summary>
    /// Space the owner may fill now (commit with <see cref="CommitDrained"/>): at most one segment beyond the
    /// window cap past the acknowledged offset. Empty when the owner must wait for acks.
    /// </summary>
    public Span<byte> DrainSpace()
    {
        Changed();
        if (_external || _sourceDone)
        {
            return default;
        }
        long limit = _acked + EffectiveWindow + ShuffleWire.MaxSegmentBytes;
        long allowed = limit - _end;
        if (allowed <= 0)
        {
            return default;
        }
        // Bytes before `keep` are no longer needed (the walker may still need the header at its position).
        long keep = TracksPriority ? Math.Min(_acked, _walk) : _acked;
        int live = (int)(_end - keep);
        int want = (int)Math.Min(allowed, int.MaxValue);
        if (_buffer is null)
        {
            // Start small: most streams at large R carry a few hundred bytes. Grow only when the buffer fills. A stream
            // that gave its buffer back between flights takes the size it grew to again rather than regrowing it.
            _buffer = _pool.Rent(Math.Min(want, Math.Max(InitialBuffer, _releasedLength)));
            _bufferOffset = keep;
        }
        int garbage = (int)(keep - _bufferOffset);
        int tail = _buffer.Length - garbage - live;
        int needed = Math.Min(want, MinDrain);
        if (tail >= needed)
        {
            return _buffer.AsSpan(garbage + live, Math.Min(tail, want));
        }
        if (garbage > 0 && garbage >= live)
        {
            // Moving the live bytes costs no more than the room it wins.
            Buffer.BlockCopy(_buffer, garbage, _buffer, 0, live);
            _bufferOffset = keep;
            garbage = 0;
            tail = _buffer.Length - live;
        }
        // The most a buffer needs: a full window plus a segment either side of it.
        int largest = _maxWindow + (2 * ShuffleWire.MaxSegmentBytes);
        if (tail < needed && _buffer.Length < largest)
        {
            // Double while small; a stream that outgrows 16 KB is a steady one: take what its window allows at once,
            // rather than leaving a trail of 32, 64 and 128 KB buffers behind (700 MB on an 8x8x8 R = 1 run).
            int grown = _buffer.Length < GrowToWindowAbove ? _buffer.Length * 2 : (int)Math.Min(live + want, largest);
            var bigger = _pool.Rent(Math.Max(grown, live + needed));
            Buffer.BlockCopy(_buffer, garbage, bigger, 0, live);
            _pool.Return(_buffer);
            _buffer = bigger;
            _bufferOffset = keep;
            garbage = 0;
            tail = _buffer.Length - live;
        }
        return _buffer.AsSpan(garbage + live, Math.Min(tail, want));
    }

    public void CommitDrained(int count)
    {
        Changed();
        if (count <= 0)
        {
            return;
        }
        if (_buffer is null || _external || (_end - _bufferOffset) + count > _buffer.Length)
        {
            throw new InvalidOperationException("commit beyond the drain space");
        }
        _end += count;
    }

    /// <summary>No more bytes: the FIN follows the last one.</summary>
    public void EndSource()
    {
        Changed();
        _sourceDone = true;
    }

    /// <summary>Bytes the receiver's window allows beyond the send offset (the stream's data aside).</summary>
    public long WindowRoom => _edge - _sent;

    /// <summary>The largest window this stream uses (its share of the server's buffer budget).</summary>
    public int MaxWindow => _maxWindow;

    private long EffectiveWindow => Math.Min(Math.Max(_edge - _acked, 0), _maxWindow);

    /// <summary>
    /// Writes one segment (header and bytes) at the start of <paramref name="destination"/>, which holds at least a
    /// segment header, and returns its length. Sends as much as the window, the data and the room allow.
    /// </summary>
    public int WriteSegment(Span<byte> destination, long now, ShuffleCounters counters)
    {
        Changed();
        long limit = Math.Min(_end, _edge);
        int room = destination.Length - ShuffleWire.SegmentHeaderSize;
        int length = (int)Math.Clamp(limit - _sent, 0, room);
        long after = _sent + length;
        bool fin = _sourceDone && after == _end;
        // Only the end of the stream asks for an ack at once: the receiver acks every quarter window received and
        // sends window updates every quarter window consumed (so a window-limited sender is clocked by those), and
        // the port timer probes a stream that has gone quiet with bytes unacknowledged.
        var flags = fin ? SegmentFlags.Fin | SegmentFlags.AckNow : SegmentFlags.None;
        ShuffleWire.WriteSegmentHeader(destination, ReduceTask, Tree, flags, length, Child, (ulong)_sent);
        if (length > 0)
        {
            _buffer.AsSpan((int)(_sent - _bufferOffset), length).CopyTo(destination[ShuffleWire.SegmentHeaderSize..]);
        }
        if (!HasInFlight)
        {
            LastProgress = now; // a new flight starts: time it from here
        }
        if (_sent < _sentHigh)
        {
            counters.RetransmittedBytes += Math.Min(length, _sentHigh - _sent);
            _rttOffset = -1; // Karn: no RTT sample across a retransmission
        }
        else if (_rttOffset < 0 && length > 0)
        {
            _rttOffset = after;
            _rttTime = now;
        }
        _sent = after;
        if (after > _sentHigh)
        {
            _sentHigh = after;
        }
        if (fin)
        {
            _finSent = true;
        }
        if (TracksPriority)
        {
            RefreshPrefix(); // keep the walker in step while the bytes it steps over are at hand
        }
        counters.SegmentsSent++;
        counters.DataBytesSent += length;
        return ShuffleWire.SegmentHeaderSize + length;
    }

    /// <summary>A zero-length probe at the send offset: the parent answers with its current window.</summary>
    public int WriteProbe(Span<byte> destination, ShuffleCounters counters)
    {
        Changed();
        ShuffleWire.WriteSegmentHeader(destination, ReduceTask, Tree, SegmentFlags.Probe | SegmentFlags.AckNow, 0, Child, (ulong)_sent);
        counters.ProbesSent++;
        return ShuffleWire.SegmentHeaderSize;
    }

    /// <summary>
    /// Applies an ack. Returns false when it acknowledges bytes never sent (dropped and counted by the caller).
    /// <paramref name="rttSample"/> is a fresh round-trip sample (ns) or -1.
    /// </summary>
    public bool OnAck(long offset, uint window, AckFlags flags, long now, out long rttSample, out bool progress)
    {
        Changed();
        rttSample = -1;
        progress = false;
        if (offset > _sentHigh || offset < 0)
        {
            return false;
        }
        if (offset > _acked)
        {
            if (_rttOffset >= 0 && offset >= _rttOffset)
            {
                rttSample = now - _rttTime;
                _rttOffset = -1;
            }
            _acked = offset;
            if (_sent < _acked)
            {
                _sent = _acked;
            }
            progress = true;
        }
        long edge = offset + window;
        if (edge > _edge)
        {
            _edge = edge;
            progress = true;
        }
        if ((flags & AckFlags.FinReceived) != 0 && _sourceDone && offset == _end && _finSent)
        {
            Complete();
            progress = true;
        }
        else if ((flags & AckFlags.Gap) != 0 && offset == _acked && _sentHigh > _acked && _recover <= _acked)
        {
            Rewind();
        }
        if (progress)
        {
            LastProgress = now;
            Backoff = 0;
            _probedSinceProgress = false;
            ReleaseIfEmpty();
        }
        return true;
    }

    /// <summary>Go-back-N: resend everything from the acknowledged offset.</summary>
    public void Rewind()
    {
        Changed();
        _recover = _sentHigh;
        _sent = _acked;
        _finSent = false;
        _rttOffset = -1;
    }

    /// <summary>
    /// The retransmission timer found no progress for an RTO. The first time, probe (the receiver may just not have
    /// acked a quiet stream yet; a probe beyond a lost frame comes back as a Gap ack, which goes back at once); if
    /// the probe brings no progress either, go back to the acknowledged offset and double the timeout. Returns true
    /// when it went back.
    /// </summary>
    public bool OnTimeout(long now)
    {
        Changed();
        LastProgress = now;
        if (!_probedSinceProgress)
        {
            _probedSinceProgress = true;
            ProbeDue = true;
            return false;
        }
        Rewind();
        Backoff = Math.Min(Backoff + 1, 16);
        return true;
    }

    /// <summary>A probe went out: wait a (backed-off) probe interval for the next.</summary>
    public void OnProbeSent(long now)
    {
        Changed();
        Backoff = Math.Min(Backoff + 1, 16);
        LastProgress = now;
    }

    /// <summary>A frame carrying this stream's segment from <paramref name="offset"/> was not accepted for sending.</summary>
    public void Unsend(long offset)
    {
        Changed();
        if (offset < _sent)
        {
            _sent = Math.Max(offset, _acked);
            _finSent = false;
            _rttOffset = -1;
        }
    }

    /// <summary>When the stream next needs the timer (RTO for data in flight, probe interval for a closed window).</summary>
    public long Deadline(long rto, long probeInterval)
    {
        if (IsComplete)
        {
            return long.MaxValue;
        }
        int shift = Math.Min(Backoff, 10);
        if (HasInFlight)
        {
            return LastProgress + (rto << shift);
        }
        return IsWindowBlocked ? LastProgress + (Math.Max(rto, probeInterval) << shift) : long.MaxValue;
    }

    private void Complete()
    {
        IsComplete = true;
        if (_buffer is not null && !_external)
        {
            _pool.Return(_buffer);
        }
        _buffer = null;
    }

    /// <summary>Gives the buffer back while every byte is acknowledged (the walker, if any, past them all).</summary>
    private void ReleaseIfEmpty()
    {
        if (_buffer is not null && !_external && _acked == _end && (!TracksPriority || _walk >= _end))
        {
            _releasedLength = _buffer.Length;
            _pool.Return(_buffer);
            _buffer = null;
        }
    }

    /// <summary>Moves the walker to the first record starting at or after the highest offset sent.</summary>
    [MethodImpl(MethodImplOptions.NoInlining)]
    private void RefreshPrefix()
    {
        if (_buffer is null)
        {
            return;
        }
        long walk = _walk;
        if (walk < _sentHigh)
        {
            // Every record sent is stepped over once; at R = N (thousands of streams per port, the scheduler asking
            // each for its next key) this loop was the simulator's hottest code, so the common two-byte header (both
            // lengths under 128) is read inline and only longer headers go through the codec.
            byte[] buffer = _buffer;
            long origin = _bufferOffset, end = _end, high = _sentHigh;
            do
            {
                if (end - walk >= 2)
                {
                    int total = RecordCodec.ShortHeader(ref buffer[(int)(walk - origin)], out _, out _);
                    if (total > 0)
                    {
                        walk += total;
                        continue;
                    }
                }
                if (!TryRecordLength(walk, out int length))
                {
                    break;
                }
                walk += length;
            }
            while (walk < high);
            _walk = walk;
        }
        // The bytes at a stream offset never change: read a record's prefix once, not on every scheduler question.
        if (walk < _end && walk != _walkPrefixAt && TryKeyPrefix(walk, out ulong prefix))
        {
            _walkPrefix = prefix;
            _walkPrefixAt = walk;
        }
    }

    private bool TryRecordLength(long offset, out int length)
    {
        length = 0;
        var bytes = _buffer.AsSpan((int)(offset - _bufferOffset), (int)(_end - offset));
        if (RecordCodec.TryReadVarint(bytes, RecordLimits.MaxKeyBytes, out int keyLength, out int keyHeader) != RecordParseStatus.Complete
            || RecordCodec.TryReadVarint(bytes[keyHeader..], RecordLimits.MaxValueBytes, out int valueLength, out int valueHeader) != RecordParseStatus.Complete)
        {
            return false;
        }
        length = keyHeader + valueHeader + keyLength + valueLength;
        return true;
    }

    private bool TryKeyPrefix(long offset, out ulong prefix)
    {
        prefix = 0;
        var bytes = _buffer.AsSpan((int)(offset - _bufferOffset), (int)(_end - offset));
        if (RecordCodec.TryReadVarint(bytes, RecordLimits.MaxKeyBytes, out int keyLength, out int keyHeader) != RecordParseStatus.Complete
            || RecordCodec.TryReadVarint(bytes[keyHeader..], RecordLimits.MaxValueBytes, out _, out int valueHeader) != RecordParseStatus.Complete)
        {
            return false;
        }
        int take = Math.Min(8, keyLength);
        int start = keyHeader + valueHeader;
        if (bytes.Length < start + take)
        {
            return false;
        }
        for (int i = 0; i < 8; i++)
        {
            prefix = (prefix << 8) | (i < take ? bytes[start + i] : 0u);
        }
        return true;
    }
}
