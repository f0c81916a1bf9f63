using Camdoop.KeyRouting;
using Camdoop.MapReduce.Buffers;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>What the receiver did with a data segment.</summary>
public enum ReceiveOutcome : byte
{
    /// <summary>New in-order bytes (possibly after skipping an already received prefix): hand them to the merger.</summary>
    Accepted,

    /// <summary>Nothing new (a retransmission or a probe): re-acknowledged.</summary>
    Duplicate,

    /// <summary>Bytes beyond a gap (an earlier frame was lost): dropped and answered with a Gap ack.</summary>
    OutOfOrder,

    /// <summary>A segment of an epoch the stream has left, or, while a restart is awaited, not the restart: dropped.</summary>
    Stale,
}

/// <summary>
/// The receiving half of one stream from a child vertex: the in-order byte count, the FIN, the advertised window
/// edge, and when to acknowledge. Acks are cumulative (offset = bytes held) and carry the window beyond it, computed
/// from the bytes the merger has consumed: edge = consumed + window. The state outlives the vertex's merger so that
/// late retransmissions are still answered.
/// <para>
/// Failure recovery: when the child is lost, the parent asks its replacement to restart the stream after the last
/// complete record held (<see cref="BeginResume"/>) and takes only that restart's segments (epoch and offsets start
/// again from 0). Internally offsets go on from the last complete record, so the merger's input simply continues:
/// the bytes of a record cut by the failure, already held, come again and are dropped as duplicates.
/// </para>
/// </summary>
public sealed class InboundStream
{
    /// <summary>Bytes a stash keeps free after its data: what a merger needs past an input's bytes.</summary>
    public const int StashSlackBytes = Merge.StreamMerger.LendSlackBytes;

    public InboundStream(ulong jobId, int reduceTask, int tree, Coordinate child, Key childVertexId, Port port, int inputIndex, byte source = 0, byte epoch = 0)
    {
        Epoch = epoch;
        JobId = jobId;
        ReduceTask = reduceTask;
        Tree = tree;
        Child = child;
        ChildVertexId = childVertexId;
        Port = port;
        InputIndex = inputIndex;
        Source = source;
    }

    public ulong JobId { get; }

    public int ReduceTask { get; }

    public int Tree { get; }

    public Coordinate Child { get; }

    /// <summary>0 for a vertex's stream, j &gt; 0 for a re-run map task's (see <see cref="StreamId"/>).</summary>
    public byte Source { get; }

    public StreamId Id => new(ReduceTask, Tree, Child, Source);

    /// <summary>Acks are key-routed to the vertex id of the server the child's segments come from.</summary>
    public Key ChildVertexId { get; internal set; }

    /// <summary>The epoch whose segments are taken (see <see cref="OutboundStream.Epoch"/>).</summary>
    public byte Epoch { get; private set; }

    /// <summary>The server that hosted the child when last looked at (its owner in this server's view); -1 unknown.</summary>
    public int ChildHost { get; set; } = -1;

    /// <summary>
    /// The epoch a restart request names as known (the sender restarts as a later one). Each new request names one
    /// more than the last, so that the answer to an earlier request still in flight (its first segment also flagged
    /// as a restart) is told apart from the answer to this one and dropped as stale.
    /// </summary>
    public byte RequestEpoch { get; private set; }

    private bool _requested;

    /// <summary>Where a restart was asked to start, while it has not begun; null otherwise.</summary>
    public ResumePoint? PendingResume { get; private set; }

    /// <summary>The server the pending restart was asked of, and when (for retries).</summary>
    public int ResumeTarget { get; set; } = -1;

    public long ResumeSentAt { get; set; }

    public int ResumeAttempts { get; set; }

    /// <summary>Follows the received records, where a restart point must be known exactly (null: computed otherwise).</summary>
    public RecordTail? Tail { get; private set; }

    // Internal offset of the current epoch's offset 0.
    private long _origin;

    /// <summary>The port whose scheduler sends this stream's acks (towards the child).</summary>
    public Port Port { get; internal set; }

    /// <summary>The merger input the stream feeds.</summary>
    public int InputIndex { get; }

    /// <summary>Bytes received in order (the next expected offset).</summary>
    public long Received { get; private set; }

    /// <summary>Bytes the merger has consumed; set by the owner after each drain.</summary>
    public long Consumed { get; set; }

    public bool FinReceived { get; private set; }

    /// <summary>Highest window edge advertised so far (the sender may send below it).</summary>
    public long AdvertisedEdge { get; private set; }

    public long LastAckedOffset { get; private set; } = -1;

    // Bytes received before the vertex has a merger (pooled buffer).
    private byte[]? _stash;
    private int _stashLength;

    // Scheduler bookkeeping.
    internal PortScheduler.JobQueue? Queue;
    internal bool AckQueued;
    private AckFlags _pendingFlags;

    /// <summary>
    /// Classifies a segment; on <see cref="ReceiveOutcome.Accepted"/> <paramref name="fresh"/> is the part not held
    /// yet, and <paramref name="finished"/> tells that the stream is complete with it. Sets whether an ack is due.
    /// </summary>
    public ReceiveOutcome Receive(in DataSegment segment, int ackEveryBytes, out ReadOnlySpan<byte> fresh, out bool finished, out bool ackNow)
    {
        fresh = default;
        finished = false;
        ackNow = false;
        if (PendingResume is not null || segment.Epoch != Epoch)
        {
            // Only a later epoch of the same generation answers the request: the sender's earlier epochs (a
            // retransmitted first segment of one also carries the restart flag) are what the request replaces. Any
            // segment of it begins the restart, not only the first: when the first is lost on the way (a failure
            // leaves queues full), the next one's gap ack sends the sender back at once instead of after its
            // retransmission timer, doubled by the probe it would send first.
            if (PendingResume is null || segment.Epoch <= Math.Max(Epoch, RequestEpoch)
                || ShuffleWire.Generation(segment.Epoch) != ShuffleWire.Generation(Epoch))
            {
                return ReceiveOutcome.Stale;
            }
            // The restart asked for has begun: take its epoch from here on, and tell the sender the window at once.
            Epoch = segment.Epoch;
            PendingResume = null;
            ResumeTarget = -1;
            ResumeAttempts = 0;
            LastAckedOffset = -1;
            AdvertisedEdge = Math.Min(AdvertisedEdge, _origin);
        }
        long offset = _origin + (long)segment.Offset;
        long end = offset + segment.Bytes.Length;
        bool fin = (segment.Flags & SegmentFlags.Fin) != 0;
        ackNow = (segment.Flags & (SegmentFlags.AckNow | SegmentFlags.Probe | SegmentFlags.Fin)) != 0;
        if (offset > Received)
        {
            _pendingFlags |= AckFlags.Gap;
            ackNow = true;
            return ReceiveOutcome.OutOfOrder;
        }
        if (FinReceived || end < Received || (end == Received && !fin))
        {
            ackNow = true;
            return ReceiveOutcome.Duplicate;
        }
        fresh = segment.Bytes[(int)(Received - offset)..];
        Received = end;
        Tail?.Feed(fresh);
        if (fin)
        {
            FinReceived = true;
            finished = true;
        }
        ackNow |= Received - LastAckedOffset >= ackEveryBytes || LastAckedOffset < 0;
        return ReceiveOutcome.Accepted;
    }

    /// <summary>
    /// Whether a window update is worth a frame: the edge would move by a quarter window (at least a segment, at most
    /// half the window). A window-limited sender is clocked by these, a few segments at a time, not one ack per frame.
    /// The half-window cap matters for windows under two segments: the merger cannot consume a record that straddles
    /// the edge, so waiting for a whole segment of consumption there left the sender blocked until its next probe.
    /// </summary>
    public bool WantsWindowUpdate(int window)
    {
        if (FinReceived || PendingResume is not null)
        {
            return false; // a stream waiting for its restart has no sender to tell
        }
        long gain = Consumed + window - AdvertisedEdge;
        return gain > 0 && gain >= Math.Min(Math.Max(window / 4, ShuffleWire.MaxSegmentBytes), window / 2);
    }

    /// <summary>Bytes held for the vertex until it creates its merger.</summary>
    public ReadOnlySpan<byte> Stashed => _stash.AsSpan(0, _stashLength);

    /// <summary>The pooled buffer holding <see cref="Stashed"/> (null when nothing is stashed).</summary>
    internal byte[]? StashBuffer => _stash;

    /// <summary>
    /// Keeps <paramref name="bytes"/> until the vertex has a merger, with <see cref="StashSlackBytes"/> to spare after
    /// them, so that the merger can take the buffer over as its input's instead of copying it
    /// (<see cref="Merge.StreamMerger.TryAdopt"/>).
    /// </summary>
    public void Stash(ReadOnlySpan<byte> bytes, ShuffleBufferPool pool)
    {
        ArgumentNullException.ThrowIfNull(pool);
        if (bytes.IsEmpty)
        {
            return;
        }
        if (_stash is null || _stash.Length - _stashLength - StashSlackBytes < bytes.Length)
        {
            var bigger = pool.Rent(_stashLength + bytes.Length + StashSlackBytes);
            if (_stash is not null)
            {
                _stash.AsSpan(0, _stashLength).CopyTo(bigger);
                pool.Return(_stash);
            }
            _stash = bigger;
        }
        bytes.CopyTo(_stash.AsSpan(_stashLength));
        _stashLength += bytes.Length;
    }

    /// <summary>Forgets the stash without returning its buffer: its new owner took it (a merger input adopted it).</summary>
    internal void HandOverStash()
    {
        _stash = null;
        _stashLength = 0;
    }

    public void ReleaseStash(ShuffleBufferPool pool)
    {
        ArgumentNullException.ThrowIfNull(pool);
        if (_stash is not null)
        {
            pool.Return(_stash);
        }
        _stash = null;
        _stashLength = 0;
    }

    /// <summary>Builds the ack to send now and records what was advertised.</summary>
    public AckEntry TakeAck(int window)
    {
        long edge = Math.Max(AdvertisedEdge, Consumed + window);
        AdvertisedEdge = edge;
        LastAckedOffset = Received;
        var flags = _pendingFlags | (FinReceived ? AckFlags.FinReceived : AckFlags.None);
        _pendingFlags = AckFlags.None;
        AckQueued = false;
        return new AckEntry(ReduceTask, Tree, Child, (ulong)(Received - _origin), (uint)Math.Min(edge - Received, uint.MaxValue), flags, Source, Epoch);
    }

    /// <summary>Starts following the received records (before any arrive): see <see cref="Tail"/>.</summary>
    public void TrackRecords() => Tail ??= new RecordTail();

    /// <summary>
    /// The child was lost: from now on only the restart of its stream at <paramref name="point"/> is taken, its offsets
    /// counting from <paramref name="alignedReceived"/>, the end of the last complete record held (bytes of a record
    /// cut there, already held, come again and are dropped as duplicates).
    /// </summary>
    public void BeginResume(ResumePoint point, long alignedReceived)
    {
        ArgumentNullException.ThrowIfNull(point);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(alignedReceived, Received);
        PendingResume = point;
        RequestEpoch = _requested ? Math.Max(Epoch, (byte)(RequestEpoch + 1)) : Epoch;
        _requested = true;
        FinReceived = false;
        _origin = alignedReceived;
        AdvertisedEdge = Math.Min(AdvertisedEdge, Received);
        LastAckedOffset = -1;
        _pendingFlags = AckFlags.None;
        ResumeAttempts = 0;
    }

    /// <summary>
    /// Forgets everything received (the vertex merges again from a restart point it asks of every child): like a new
    /// stream waiting for the restart at <paramref name="point"/>.
    /// </summary>
    public void Restart(ResumePoint point, ShuffleBufferPool pool)
    {
        ArgumentNullException.ThrowIfNull(point);
        ReleaseStash(pool);
        Received = 0;
        Consumed = 0;
        AdvertisedEdge = 0;
        Tail?.Clear();
        BeginResume(point, 0);
    }
}
