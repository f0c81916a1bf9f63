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
}

/// <summary>
/// The receiving half of one stream from a child vertex: the in-order byte count, the FIN, the advertised window
/// edge, and when to acknowledge. Acks are cumulative (offset = bytes held) and carry the window beyond it, computed
/// from the bytes the merger has consumed: edge = consumed + window. The state outlives the vertex's merger so that
/// late retransmissions are still answered.
/// </summary>
public sealed class InboundStream
{
    /// <summary>Bytes a stash keeps free after its data: what a merger needs past an input's bytes.</summary>
    public const int StashSlackBytes = Merge.StreamMerger.LendSlackBytes;

    public InboundStream(ulong jobId, int reduceTask, int tree, Coordinate child, Key childVertexId, Port port, int inputIndex)
    {
        JobId = jobId;
        ReduceTask = reduceTask;
        Tree = tree;
        Child = child;
        ChildVertexId = childVertexId;
        Port = port;
        InputIndex = inputIndex;
    }

    public ulong JobId { get; }

    public int ReduceTask { get; }

    public int Tree { get; }

    public Coordinate Child { get; }

    /// <summary>Acks are key-routed to the child's vertex id.</summary>
    public Key ChildVertexId { get; }

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
        long offset = (long)segment.Offset;
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
        if (fin)
        {
            FinReceived = true;
            finished = true;
        }
        ackNow |= Received - LastAckedOffset >= ackEveryBytes;
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
        if (FinReceived)
        {
            return false;
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
        return new AckEntry(ReduceTask, Tree, Child, (ulong)Received, (uint)Math.Min(edge - Received, uint.MaxValue), flags);
    }
}
