using System.Runtime.CompilerServices;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Buffers;
using Camdoop.MapReduce.Jobs;
using Camdoop.Records;
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
/// Buffering: bytes [acked, end) live in one linear buffer rented from the server's <see cref="ShuffleBufferPool"/>
/// while the stream is active (compacted when the acknowledged prefix outgrows the live part, grown on demand up to
/// the window cap) and returned when the FIN is acknowledged. The owner may run at most one segment ahead of the
/// window.
/// </para>
/// <para>
/// Failure recovery (the Camdoop paper, §4.2): a stream may keep the last <see cref="Retention"/> bytes before its
/// acknowledged offset (from a record boundary its owner noted), so that when its parent is lost it can start again
/// from the parent's last key without regenerating anything (<see cref="TryRestartAt"/>); otherwise its owner
/// regenerates it (<see cref="Reset"/>). Each start after the first is an epoch: offsets count from 0 again, and the
/// segments at offset 0 carry <see cref="SegmentFlags.Restart"/>.
/// </para>
/// </summary>
public sealed class OutboundStream
{
    private const int InitialBuffer = 512;

    // The buffer grows (or is compacted) only when less than this is left at its end.
    private const int MinDrain = 512;
    private const int GrowToWindowAbove = 16 * 1024;

    private int _releasedLength; // length of the notional buffer when the real one was last given back
    private int _notional; // the notional send buffer's length (0: none): see DrainSpace
    private long _notionalOffset; // stream offset of its first byte

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
    private readonly int _initialWindow;
    private int _externalStart; // an external run's first byte in _buffer

    // Recovery: bytes from _retainFrom (a record start) on stay in the buffer; record starts the owner noted, oldest
    // first, are where _retainFrom may move to. long.MaxValue when nothing is kept.
    private long _retainFrom = long.MaxValue;
    private long[]? _boundaries;
    private int _boundaryHead;
    private int _boundaryCount;
    private long _lastBoundary;
    private bool _restarted; // epoch > 0: segments at offset 0 carry Restart
    private ResumePoint _startPoint = ResumePoint.Start; // the epoch's offset 0 is the first record after this
    private long _resend; // bytes from offset 0 of this epoch that were sent before the restart

    public OutboundStream(ulong jobId, int reduceTask, int tree, Coordinate child, Key destination, Port port, int initialWindow, int maxWindow, ShuffleBufferPool pool,
        byte source = 0, byte epoch = 0)
    {
        Epoch = epoch;
        _restarted = epoch != 0;
        _pool = pool;
        JobId = jobId;
        ReduceTask = reduceTask;
        Tree = tree;
        Child = child;
        Source = source;
        _destination = destination;
        Port = port;
        _edge = initialWindow;
        _initialWindow = initialWindow;
        _maxWindow = maxWindow;
    }

    public ulong JobId { get; }

    public int ReduceTask { get; }

    public int Tree { get; }

    /// <summary>The sending vertex's coordinate (its vertex id's top bits), or the server a re-run map task ran on first.</summary>
    public Coordinate Child { get; }

    /// <summary>0 for a vertex's stream, j &gt; 0 for the j-th map task of <see cref="Child"/> re-run after a failure.</summary>
    public byte Source { get; }

    /// <summary>Which start of the stream this is: 0, then one more at each restart.</summary>
    public byte Epoch { get; private set; }

    public StreamId Id => new(ReduceTask, Tree, Child, Source);

    /// <summary>The key frames are routed by: the vertex id of the server hosting the parent vertex.</summary>
    public Key Destination
    {
        get => _destination;
        internal set
        {
            Changed();
            _destination = value;
        }
    }

    private Key _destination;

    /// <summary>
    /// The parent was lost: nothing is sent until it asks for a restart (<see cref="TryRestartAt"/> or <see cref="Reset"/>).
    /// The owner may go on filling the buffer meanwhile.
    /// </summary>
    public bool Suspended { get; private set; }

    /// <summary>Bytes kept before the acknowledged offset for a restart (0: none).</summary>
    public long Retention { get; private set; }

    /// <summary>A line of the stream's state, for logs.</summary>
    public string Describe() => FormattableString.Invariant(
        $"epoch {Epoch} end {_end} sent {_sent}/{_sentHigh} acked {_acked} edge {_edge} done {_sourceDone} fin {_finSent} complete {IsComplete} suspended {Suspended} backoff {Backoff}");

    /// <summary>Where the bytes kept for a restart begin (long.MaxValue: none kept); record starts noted ahead of it.</summary>
    public (long From, int Noted) Kept => (_retainFrom, _boundaryCount);

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
    public long SendableBytes => IsComplete || Suspended ? 0 : Math.Max(0, Math.Min(_end, _edge) - _sent);

    /// <summary>The FIN could go now (everything else sent).</summary>
    public bool FinPending => !IsComplete && !Suspended && _sourceDone && !_finSent && _sent == _end;

    /// <summary>Whether a segment could go out now: data inside the window, or the FIN.</summary>
    public bool HasSendable => !IsComplete && !Suspended && (_sent < Math.Min(_end, _edge) || (_sourceDone && !_finSent && _sent == _end));

    /// <summary>Data waits but the window is closed and nothing is in flight: only a probe can reopen it if an update was lost.</summary>
    public bool IsWindowBlocked => !IsComplete && !Suspended && !HasInFlight && _sent < _end && _sent >= _edge;

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
        _externalStart = segment.Offset;
        _end = segment.Count;
        _sourceDone = true;
    }

    /// <summary>
    /// Space the owner may fill now (commit with <see cref="CommitDrained"/>): at most one segment beyond the
    /// window cap past the acknowledged offset. Empty when the owner must wait for acks.
    /// <para>
    /// How much it hands out follows a notional send buffer that holds only the bytes not yet acknowledged: it starts
    /// small, doubles while small, then takes what the window allows at once, and is compacted when the acknowledged
    /// part outgrows the rest. The real buffer also holds the bytes kept for a restart, so that keeping them changes
    /// memory, never what is sent when.
    /// </para>
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
        // Bytes before `keep` are no longer needed to send (the walker may still need the header at its position).
        long keep = TracksPriority ? Math.Min(_acked, _walk) : _acked;
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
        return length <= 0 ? default : Room(Math.Min(keep, _retainFrom), length);
    }

    /// <summary>
    /// The real buffer's room for <paramref name="length"/> more bytes, keeping everything from <paramref name="keep"/>
    /// on: compacted when that makes room, else grown (by half again at least, so that kept bytes do not make it grow
    /// step by step).
    /// </summary>
    private Span<byte> Room(long keep, int length)
    {
        long need = _end + length - keep;
        if (_buffer is null)
        {
            _buffer = _pool.Rent((int)need);
            _bufferOffset = keep;
        }
        else if (_end + length - _bufferOffset > _buffer.Length)
        {
            int live = (int)(_end - keep);
            int garbage = (int)(keep - _bufferOffset);
            if (live + length <= _buffer.Length && garbage >= live)
            {
                Buffer.BlockCopy(_buffer, garbage, _buffer, 0, live);
            }
            else
            {
                var bigger = _pool.Rent((int)Math.Max(need, Retention > 0 ? _buffer.Length + (_buffer.Length / 2) : need));
                Buffer.BlockCopy(_buffer, garbage, bigger, 0, live);
                _pool.Return(_buffer);
                _buffer = bigger;
            }
            _bufferOffset = keep;
        }
        return _buffer.AsSpan((int)(_end - _bufferOffset), length);
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
        if (_restarted && _sent == 0)
        {
            flags |= SegmentFlags.Restart;
        }
        ShuffleWire.WriteSegmentHeader(destination, ReduceTask, Tree, flags, length, Child, (ulong)_sent, Source, Epoch);
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
        else
        {
            if (_rttOffset < 0 && length > 0)
            {
                _rttOffset = after;
                _rttTime = now;
            }
            if (_resend > _sent)
            {
                counters.ResentBytes += Math.Min(length, _resend - _sent);
            }
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
        var flags = SegmentFlags.Probe | SegmentFlags.AckNow | (_restarted && _sent == 0 ? SegmentFlags.Restart : SegmentFlags.None);
        ShuffleWire.WriteSegmentHeader(destination, ReduceTask, Tree, flags, 0, Child, (ulong)_sent, Source, Epoch);
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
            AdvanceRetention(Retention);
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

    /// <summary>
    /// When the stream next needs the timer: the RTO for data in flight, the probe interval for a closed window, each
    /// doubled per try without progress but never beyond <paramref name="maxWait"/>.
    /// </summary>
    public long Deadline(long rto, long probeInterval, long maxWait = long.MaxValue)
    {
        if (IsComplete || Suspended)
        {
            return long.MaxValue;
        }
        int shift = Math.Min(Backoff, 10);
        if (HasInFlight)
        {
            return LastProgress + Math.Min(rto << shift, maxWait);
        }
        return IsWindowBlocked ? LastProgress + Math.Min(Math.Max(rto, probeInterval) << shift, maxWait) : long.MaxValue;
    }

    private void Complete()
    {
        IsComplete = true;
        if (_external)
        {
            return; // the lent run stays readable for a restart; it is not the pool's
        }
        if (_buffer is not null)
        {
            _pool.Return(_buffer);
        }
        _buffer = null;
        _notional = 0;
        _retainFrom = long.MaxValue;
        _boundaryCount = 0;
    }

    /// <summary>Gives the buffer back while every byte is acknowledged (the walker, if any, past them all) and none is kept.</summary>
    private void ReleaseIfEmpty()
    {
        if (_external || _acked != _end || (TracksPriority && _walk < _end))
        {
            return;
        }
        if (_notional != 0)
        {
            _releasedLength = _notional;
            _notional = 0;
        }
        if (_buffer is not null && _retainFrom >= _end)
        {
            _pool.Return(_buffer);
            _buffer = null;
        }
    }

    /// <summary>
    /// Keeps the last <paramref name="bytes"/> bytes before the acknowledged offset for a restart (0: none). Only record
    /// starts the owner notes (<see cref="NoteRecordBoundary"/>) bound what is kept, so a stream whose owner notes none
    /// keeps everything from its first byte.
    /// </summary>
    public void SetRetention(long bytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        Retention = bytes;
        _retainFrom = bytes > 0 && !IsComplete ? Math.Min(_retainFrom, 0) : long.MaxValue;
    }

    /// <summary>
    /// The owner tells that <paramref name="offset"/> (at or past the stream's end: where the bytes its merger holds
    /// for the stream will end) is a record boundary: a place retention may start from. Noted sparsely; costs nothing
    /// without retention.
    /// </summary>
    public void NoteRecordBoundary(long offset)
    {
        if (Retention == 0)
        {
            return;
        }
        if (_retainFrom == long.MaxValue)
        {
            // Nothing is kept (retention gave way to the window): keep again from here, which is not written yet.
            _retainFrom = offset;
            _lastBoundary = offset;
            return;
        }
        if (offset - _lastBoundary < Math.Max(4096, Retention / 16))
        {
            return;
        }
        var ring = _boundaries ??= new long[16];
        if (_boundaryCount == ring.Length)
        {
            // Full: the oldest noted start is the least useful; drop it (retention keeps more, never less).
            _boundaryHead = (_boundaryHead + 1) % ring.Length;
            _boundaryCount--;
        }
        ring[(_boundaryHead + _boundaryCount) % ring.Length] = offset;
        _boundaryCount++;
        _lastBoundary = offset;
    }

    /// <summary>Lets go of kept bytes more than <paramref name="keep"/> before the acknowledged offset.</summary>
    private void AdvanceRetention(long keep)
    {
        if (_boundaryCount == 0)
        {
            return;
        }
        var ring = _boundaries!;
        long limit = _acked - keep;
        while (_boundaryCount > 0 && ring[_boundaryHead] <= limit)
        {
            _retainFrom = ring[_boundaryHead];
            _boundaryHead = (_boundaryHead + 1) % ring.Length;
            _boundaryCount--;
        }
        if (_retainFrom != long.MaxValue && _acked - _retainFrom > (2 * Retention) + _maxWindow)
        {
            // No record start was noted for too long: keep nothing until the next one rather than grow without bound.
            _retainFrom = long.MaxValue;
            _boundaryCount = 0;
        }
    }


    /// <summary>
    /// Counts the first <paramref name="bytes"/> this epoch sends as sent again (<see cref="ShuffleCounters.ResentBytes"/>):
    /// a stream of a reduce task that started over repeats what the task's vertex here had sent before.
    /// </summary>
    public void CountAsResent(long bytes) => _resend = Math.Max(_resend, bytes);

    /// <summary>The stream is dropped (its reduce task starts over on new trees): its buffer goes back to the pool.</summary>
    public void Discard()
    {
        Changed();
        Suspended = true;
        if (_buffer is not null && !_external)
        {
            _pool.Return(_buffer);
        }
        _buffer = null;
        _retainFrom = long.MaxValue;
        _boundaryCount = 0;
    }

    /// <summary>Stops sending: the parent was lost, and a restart request will say from where to go on.</summary>
    public void Suspend()
    {
        Changed();
        Suspended = true;
    }

    /// <summary>
    /// Starts epoch <paramref name="epoch"/> at <paramref name="point"/> from the bytes still held (the kept ones, or an
    /// external stream's whole run), so nothing has to be regenerated. False, changing nothing, when those bytes do not
    /// reach back to the point (the owner then regenerates the stream: <see cref="Reset"/>).
    /// </summary>
    public bool TryRestartAt(ResumePoint point, IKeyComparer? comparer, byte epoch)
    {
        ArgumentNullException.ThrowIfNull(point);
        long from = _external ? _externalStart + _bufferOffset : _retainFrom;
        if (_buffer is null || from == long.MaxValue || from > _end)
        {
            return false;
        }
        var held = _buffer.AsSpan((int)(from - _bufferOffset), (int)(_end - from));
        // Kept from the epoch's first byte: enough when the epoch began no later than the point. Kept from later on:
        // enough when the first record kept comes before the point.
        bool covers = _external || (from <= 0 ? _startPoint.IsAtOrBefore(point, comparer) : point.IsBefore(held, comparer));
        if (!covers)
        {
            return false;
        }
        uint skipped = 0;
        int found = point.FindFirstAfter(held, comparer, ref skipped, out int consumed);
        if (found < 0 && !_sourceDone && point.IsAfterAll(held, comparer))
        {
            // The point lies beyond everything produced so far (a reduce task going on from its output's replica asks
            // for records far ahead): what the source still produces may come before it, so it must skip them itself.
            return false;
        }
        long target = from + (found >= 0 ? found : consumed);
        Rebase(target, epoch);
        if (!_external)
        {
            _startPoint = point;
        }
        return true;
    }

    /// <summary>
    /// Drops everything: the owner regenerates the stream as epoch <paramref name="epoch"/>, from the first record
    /// after <paramref name="startPoint"/>.
    /// </summary>
    public void Reset(byte epoch, ResumePoint startPoint)
    {
        ArgumentNullException.ThrowIfNull(startPoint);
        _startPoint = startPoint;
        Changed();
        long resend = _sentHigh;
        if (_buffer is not null && !_external)
        {
            _pool.Return(_buffer);
        }
        _buffer = null;
        _external = false;
        _externalStart = 0;
        _bufferOffset = 0;
        _end = 0;
        _sourceDone = false;
        _retainFrom = Retention > 0 ? 0 : long.MaxValue;
        _boundaryCount = 0;
        _lastBoundary = 0;
        StartEpoch(epoch);
        // A regenerated stream repeats at most what its previous epoch sent (exactly that when it starts from the beginning).
        _resend = resend;
    }

    /// <summary>Makes <paramref name="offset"/> the new epoch's offset 0, keeping the bytes from there on.</summary>
    private void Rebase(long offset, byte epoch)
    {
        Changed();
        long resend = Math.Max(0, _sentHigh - offset);
        _bufferOffset -= offset;
        _end -= offset;
        _retainFrom = Retention > 0 && !_external ? 0 : long.MaxValue;
        int kept = 0;
        for (int i = 0; i < _boundaryCount; i++)
        {
            long b = _boundaries![(_boundaryHead + i) % _boundaries.Length] - offset;
            if (b > 0)
            {
                _boundaries[kept++] = b;
            }
        }
        _boundaryHead = 0;
        _boundaryCount = kept;
        _lastBoundary = Math.Max(0, _lastBoundary - offset);
        StartEpoch(epoch);
        _resend = resend;
    }

    private void StartEpoch(byte epoch)
    {
        Epoch = epoch;
        _restarted = true;
        Suspended = false;
        IsComplete = false;
        _acked = 0;
        _sent = 0;
        _sentHigh = 0;
        _recover = 0;
        _finSent = false;
        _edge = _initialWindow;
        _rttOffset = -1;
        _probedSinceProgress = false;
        _probeDue = false;
        Backoff = 0;
        _walk = 0;
        _walkPrefixAt = -1;
        _releasedLength = 0;
        _notional = 0;
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
