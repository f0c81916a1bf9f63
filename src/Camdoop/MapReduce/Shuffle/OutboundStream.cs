using Camdoop.KeyRouting;
using Camdoop.MapReduce.Buffers;
using Camdoop.MapReduce.Jobs;
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
/// It composes, one concern each: the <see cref="SendWindow"/> (offsets sent and acknowledged, the receiver's window,
/// retransmission and backoff), the <see cref="SendBuffer"/> (bytes [acked, end) in one buffer rented from the
/// server's <see cref="ShuffleBufferPool"/> while the stream is active, or a lent run; the owner may run at most one
/// segment ahead of the window), the <see cref="RetentionLog"/> (bytes kept after acknowledgement, from record starts
/// the owner notes: <see cref="RecordBoundaries"/>) and the <see cref="NextRecordKey"/> (the next key to send, for
/// the scheduler's priority).
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
    // Mutable structs, used in place: a server holds thousands of streams, each touched per segment and per ack.
    private SendWindow _window;
    private SendBuffer _bytes;
    private RetentionLog _retention;
    private NextRecordKey _next;

    private bool _sourceDone;
    private bool _restarted; // epoch > 0: segments at offset 0 carry Restart
    private ResumePoint _startPoint = ResumePoint.Start; // the epoch's offset 0 is the first record after this
    private long _resend; // bytes from offset 0 of this epoch that were sent before the restart

    public OutboundStream(ulong jobId, int reduceTask, int tree, Coordinate child, Key destination, Port port, int initialWindow, int maxWindow, ShuffleBufferPool pool,
        byte source = 0, byte epoch = 0)
    {
        Epoch = epoch;
        _restarted = epoch != 0;
        JobId = jobId;
        ReduceTask = reduceTask;
        Tree = tree;
        Child = child;
        Source = source;
        _destination = destination;
        Port = port;
        _window = new SendWindow(initialWindow, maxWindow);
        _bytes = new SendBuffer(pool, maxWindow);
        _retention = new RetentionLog();
        _next = new NextRecordKey();
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
    public long Retention => _retention.Bytes;

    /// <summary>A line of the stream's state, for logs.</summary>
    public string Describe() => FormattableString.Invariant(
        $"epoch {Epoch} end {End} sent {_window.Sent}/{_window.SentHigh} acked {_window.Acknowledged} edge {_window.Edge} done {_sourceDone} fin {_window.FinSent} complete {IsComplete} suspended {Suspended} backoff {Backoff}");

    /// <summary>Where the bytes kept for a restart begin (long.MaxValue: none kept); record starts noted ahead of it.</summary>
    public (long From, int Noted) Kept => (_retention.From, _retention.Noted);

    /// <summary>The port whose scheduler sends this stream (the route's first hop).</summary>
    public Port Port { get; internal set; }

    /// <summary>Bytes the owner has appended so far.</summary>
    public long End => _bytes.End;

    public long Acknowledged => _window.Acknowledged;

    public long SentHigh => _window.SentHigh;

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
    public long LastProgress => _window.LastProgress;

    /// <summary>Consecutive timeouts without progress (the RTO doubles each time).</summary>
    public int Backoff => _window.Backoff;

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
    public long SendOffset => _window.Sent;

    /// <summary>Bytes not yet acknowledged, in flight or waiting.</summary>
    public long Unacknowledged => End - Acknowledged;

    /// <summary>Bytes sent (at least once) and not acknowledged, or an unacknowledged FIN.</summary>
    public bool HasInFlight => _window.HasUnacknowledgedData || (_window.FinSent && !IsComplete);

    /// <summary>Bytes a segment could carry now (inside the window).</summary>
    public long SendableBytes => IsComplete || Suspended ? 0 : _window.Sendable(End);

    /// <summary>The FIN could go now (everything else sent).</summary>
    public bool FinPending => !IsComplete && !Suspended && _sourceDone && !_window.FinSent && _window.AllSent(End);

    /// <summary>Whether a segment could go out now: data inside the window, or the FIN.</summary>
    public bool HasSendable => !IsComplete && !Suspended && (_window.CanSend(End) || (_sourceDone && !_window.FinSent && _window.AllSent(End)));

    /// <summary>Data waits but the window is closed and nothing is in flight: only a probe can reopen it if an update was lost.</summary>
    public bool IsWindowBlocked => !IsComplete && !Suspended && !HasInFlight && _window.IsClosedBefore(End);

    /// <summary>
    /// Key prefix of the next record to send (the lowest key first across streams keeps reducers from stalling).
    /// Maintained only when <see cref="TracksPriority"/>.
    /// </summary>
    public ulong NextKeyPrefix
    {
        get
        {
            RefreshPrefix();
            return _next.Prefix;
        }
    }

    /// <summary>Lends an in-memory run as the whole stream (no copy, nothing to release): a leaf with one local run.</summary>
    public void UseExternal(ReadOnlyMemory<byte> data)
    {
        Changed();
        _bytes.Lend(data);
        _sourceDone = true;
    }

    /// <summary>
    /// Space the owner may fill now (commit with <see cref="CommitDrained"/>): at most one segment beyond the
    /// window cap past the acknowledged offset. Empty when the owner must wait for acks.
    /// </summary>
    public Span<byte> DrainSpace()
    {
        Changed();
        if (_bytes.IsLent || _sourceDone)
        {
            return default;
        }
        long acked = _window.Acknowledged;
        long limit = acked + _window.Effective + ShuffleWire.MaxSegmentBytes;
        long allowed = limit - _bytes.End;
        if (allowed <= 0)
        {
            return default;
        }
        // Bytes before `keep` are no longer needed to send (the walker may still need the header at its position).
        long keep = TracksPriority ? Math.Min(acked, _next.Offset) : acked;
        return _bytes.Space(keep, allowed, _retention.From, _retention.Bytes > 0);
    }

    public void CommitDrained(int count)
    {
        Changed();
        if (count <= 0)
        {
            return;
        }
        _bytes.Commit(count);
    }

    /// <summary>No more bytes: the FIN follows the last one.</summary>
    public void EndSource()
    {
        Changed();
        _sourceDone = true;
    }

    /// <summary>Bytes the receiver's window allows beyond the send offset (the stream's data aside).</summary>
    public long WindowRoom => _window.Room;

    /// <summary>The largest window this stream uses (its share of the server's buffer budget).</summary>
    public int MaxWindow => _window.MaxWindow;

    /// <summary>
    /// Writes one segment (header and bytes) at the start of <paramref name="destination"/>, which holds at least a
    /// segment header, and returns its length. Sends as much as the window, the data and the room allow.
    /// </summary>
    public int WriteSegment(Span<byte> destination, long now, ShuffleCounters counters)
    {
        Changed();
        long sent = _window.Sent;
        long end = _bytes.End;
        long limit = Math.Min(end, _window.Edge);
        int room = destination.Length - ShuffleWire.SegmentHeaderSize;
        int length = (int)Math.Clamp(limit - sent, 0, room);
        bool fin = _sourceDone && sent + length == end;
        // Only the end of the stream asks for an ack at once: the receiver acks every quarter window received and
        // sends window updates every quarter window consumed (so a window-limited sender is clocked by those), and
        // the port timer probes a stream that has gone quiet with bytes unacknowledged.
        var flags = fin ? SegmentFlags.Fin | SegmentFlags.AckNow : SegmentFlags.None;
        if (_restarted && sent == 0)
        {
            flags |= SegmentFlags.Restart;
        }
        ShuffleWire.WriteSegmentHeader(destination, ReduceTask, Tree, flags, length, Child, (ulong)sent, Source, Epoch);
        if (length > 0)
        {
            _bytes.Slice(sent, length).CopyTo(destination[ShuffleWire.SegmentHeaderSize..]);
        }
        if (sent >= _window.SentHigh && _resend > sent)
        {
            counters.ResentBytes += Math.Min(length, _resend - sent);
        }
        counters.RetransmittedBytes += _window.OnSegmentSent(length, fin, newFlight: !HasInFlight, now);
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
        long sent = _window.Sent;
        var flags = SegmentFlags.Probe | SegmentFlags.AckNow | (_restarted && sent == 0 ? SegmentFlags.Restart : SegmentFlags.None);
        ShuffleWire.WriteSegmentHeader(destination, ReduceTask, Tree, flags, 0, Child, (ulong)sent, Source, Epoch);
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
        if (!_window.OnAck(offset, window, now, out rttSample, out progress))
        {
            return false;
        }
        if ((flags & AckFlags.FinReceived) != 0 && _sourceDone && offset == End && _window.FinSent)
        {
            Complete();
            progress = true;
        }
        else if ((flags & AckFlags.Gap) != 0 && _window.IsNewLoss(offset))
        {
            Rewind();
        }
        else if (_window.FinSent && _sourceDone && offset == End && _window.ProbedSinceProgress)
        {
            // A receiver answers a FIN at once: an answer to the probe that followed it, without the FIN, means the FIN
            // was lost (a restart's FIN-only stream, dropped by the congestion a failure leaves). Send it again now
            // rather than after the doubled timeout.
            Rewind();
        }
        if (progress)
        {
            _window.OnProgress(now);
            _retention.Advance(_window.Acknowledged, _window.MaxWindow);
            ReleaseIfEmpty();
        }
        return true;
    }

    /// <summary>Go-back-N: resend everything from the acknowledged offset.</summary>
    public void Rewind()
    {
        Changed();
        _window.Rewind();
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
        if (_window.OnTimeout(now))
        {
            return true;
        }
        ProbeDue = true;
        return false;
    }

    /// <summary>A probe went out: wait a (backed-off) probe interval for the next.</summary>
    public void OnProbeSent(long now)
    {
        Changed();
        _window.OnProbeSent(now);
    }

    /// <summary>A frame carrying this stream's segment from <paramref name="offset"/> was not accepted for sending.</summary>
    public void Unsend(long offset)
    {
        Changed();
        _window.Unsend(offset);
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
        if (HasInFlight)
        {
            return _window.RetransmitDeadline(rto, maxWait);
        }
        return IsWindowBlocked ? _window.ProbeDeadline(rto, probeInterval, maxWait) : long.MaxValue;
    }

    private void Complete()
    {
        IsComplete = true;
        if (_bytes.IsLent)
        {
            return; // the lent run stays readable for a restart; it is not the pool's
        }
        _bytes.Free();
        _retention.Forget();
    }

    /// <summary>Gives the buffer back while every byte is acknowledged (the walker, if any, past them all) and none is kept.</summary>
    private void ReleaseIfEmpty()
    {
        long end = _bytes.End;
        if (_bytes.IsLent || _window.Acknowledged != end || (TracksPriority && _next.Offset < end))
        {
            return;
        }
        _bytes.ReleaseIdle(_retention.From);
    }

    /// <summary>
    /// Keeps the last <paramref name="bytes"/> bytes before the acknowledged offset for a restart (0: none). Only record
    /// starts the owner notes (<see cref="NoteRecordBoundary"/>) bound what is kept, so a stream whose owner notes none
    /// keeps everything from its first byte.
    /// </summary>
    public void SetRetention(long bytes)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytes);
        _retention.Set(bytes, IsComplete);
    }

    /// <summary>
    /// The owner tells that <paramref name="offset"/> (at or past the stream's end: where the bytes its merger holds
    /// for the stream will end) is a record boundary: a place retention may start from. Noted sparsely; costs nothing
    /// without retention.
    /// </summary>
    public void NoteRecordBoundary(long offset) => _retention.Note(offset);

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
        _bytes.Drop();
        _retention.Forget();
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
        bool lent = _bytes.IsLent;
        long from = lent ? _bytes.LentStart : _retention.From;
        if (!_bytes.IsHeld || from == long.MaxValue || from > _bytes.End)
        {
            return false;
        }
        var held = _bytes.From(from);
        // Kept from the epoch's first byte: enough when the epoch began no later than the point. Kept from later on:
        // enough when the first record kept comes before the point.
        bool covers = lent || (from <= 0 ? _startPoint.IsAtOrBefore(point, comparer) : point.IsBefore(held, comparer));
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
        if (!lent)
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
        long resend = _window.SentHigh;
        _bytes.Clear();
        _sourceDone = false;
        _retention.Restart();
        StartEpoch(epoch);
        // A regenerated stream repeats at most what its previous epoch sent (exactly that when it starts from the beginning).
        _resend = resend;
    }

    /// <summary>Makes <paramref name="offset"/> the new epoch's offset 0, keeping the bytes from there on.</summary>
    private void Rebase(long offset, byte epoch)
    {
        Changed();
        long resend = Math.Max(0, _window.SentHigh - offset);
        _bytes.Rebase(offset);
        _retention.Rebase(offset, fromStart: !_bytes.IsLent);
        StartEpoch(epoch);
        _resend = resend;
    }

    private void StartEpoch(byte epoch)
    {
        Epoch = epoch;
        _restarted = true;
        Suspended = false;
        IsComplete = false;
        _window.Restart();
        _probeDue = false;
        _next.Reset();
    }

    /// <summary>Moves the walker to the first record starting at or after the highest offset sent.</summary>
    private void RefreshPrefix() => _next.Refresh(_bytes.Array, _bytes.Origin, _bytes.End, _window.SentHigh);
}
