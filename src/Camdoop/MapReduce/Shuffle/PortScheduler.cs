using System.Diagnostics;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// Decides what the Camdoop service sends next on one port, as late as possible (the Camdoop paper, §3, §4.1): whenever the
/// service's runtime queue on the port has room, acks go first, then the jobs take turns (round robin, fair sharing),
/// and within a job the stream whose next key is lowest goes first (content-based priority keeps reducers from
/// stalling). Segments of several streams of the job to the same vertex share a frame, a jumbo one unless a short
/// stream leads it (<see cref="FrameRoom"/>). One retransmission timer per
/// port covers every stream sending on it; it is re-armed lazily, at the earliest deadline it finds. A job with a
/// rate limit (<see cref="ShuffleTransport.SetJobLimit"/>) takes its turn only when its token bucket holds a whole
/// frame: until then the other jobs go, and a second timer wakes the port when the first limited job may send again.
/// </summary>
public sealed class PortScheduler
{
    /// <summary>Streams that have sent less than this may go in short frames (<see cref="FrameRoom"/>).</summary>
    internal const long ShortStreamBytes = 512 * 1024;

    /// <summary>Payload room of a short frame: half a jumbo frame.</summary>
    internal const int ShortFramePayload = ShuffleWire.MaxPayload / 2;

    /// <summary>The most bytes a data frame takes on the wire (headers, key and payload): what a limited job must hold to go.</summary>
    private const int MaxFrameBytes = FrameLayout.MaxFrameSize;

    private readonly ShuffleTransport _transport;
    private readonly List<JobQueue> _jobs = [];
    private readonly List<OutboundStream> _watch = [];
    private readonly List<(OutboundStream Stream, long Offset)> _inFrame = [];
    private readonly Action _onTimer;
    private readonly Action _onTokens;
    private long _tokensDue = -1;
    private int _nextJob;
    private bool _timerArmed;
    private long _timerDue;
    private RttEstimator _rtt;

    /// <summary>
    /// Tests set this to have every pick read every stream again and throw where a recorded entry was out of date (a
    /// change to a stream that did not clear its mark).
    /// </summary>
    internal static bool CheckRecords { get; set; }

    internal PortScheduler(ShuffleTransport transport, Port port)
    {
        _transport = transport;
        Port = port;
        _onTimer = OnTimer;
        _onTokens = OnTokensReturned;
    }

    public Port Port { get; }

    /// <summary>Current retransmission timeout on this port (from the round-trip times measured here).</summary>
    public long RetransmitTimeout => _rtt.Timeout(_transport.Options.MinRetransmitTimeout, _transport.Options.MaxRetransmitTimeout);

    public long SmoothedRtt => _rtt.SmoothedRtt;

    internal bool IsDirty { get; set; }

    /// <summary>Whether anything is waiting to be sent on this port.</summary>
    public bool HasWork
    {
        get
        {
            foreach (var q in _jobs)
            {
                if (q.Acks.Count > 0 || q.Ready.Count > 0)
                {
                    return true;
                }
            }
            return false;
        }
    }

    internal void Register(OutboundStream stream)
    {
        var q = QueueOf(stream);
        // Several streams of the job compete for this link: order them by their next key. Only a stream that has
        // produced nothing yet can start tracking it (its walker steps over records from the first); one moved here
        // in the middle of its bytes after a failure goes untracked, that is first.
        if (q.FirstStream is null)
        {
            q.FirstStream = stream;
        }
        else
        {
            TrackPriority(q.FirstStream);
            TrackPriority(stream);
        }
    }

    private static void TrackPriority(OutboundStream stream)
    {
        if (!stream.TracksPriority && stream.End == 0 && stream.SentHigh == 0)
        {
            stream.TracksPriority = true;
        }
    }

    /// <summary>Takes a stream off this port (its first hop moved elsewhere after a failure).</summary>
    internal void Detach(OutboundStream stream)
    {
        if (stream.InReadyList)
        {
            RemoveAt(stream.Queue!, stream.ReadyIndex);
        }
        if (stream.InWatchList)
        {
            _watch.Remove(stream);
            stream.InWatchList = false;
        }
        if (stream.Queue is { } q && ReferenceEquals(q.FirstStream, stream))
        {
            q.FirstStream = null;
        }
        stream.Queue = null;
    }

    /// <summary>Takes an inbound stream's pending ack off this port.</summary>
    internal void DetachAck(InboundStream stream)
    {
        if (stream.AckQueued && stream.Queue is { } q)
        {
            q.Acks.Remove(stream);
            stream.AckQueued = false;
        }
        stream.Queue = null;
    }

    internal void Unregister(ulong jobId)
    {
        int i = _jobs.FindIndex(q => q.JobId == jobId);
        if (i < 0)
        {
            return;
        }
        _jobs.RemoveAt(i);
        _watch.RemoveAll(s => s.JobId == jobId);
        if (_nextJob >= _jobs.Count)
        {
            _nextJob = 0;
        }
    }

    internal void MarkReady(OutboundStream stream)
    {
        if (!stream.InReadyList)
        {
            var q = QueueOf(stream);
            stream.ReadyIndex = q.Ready.Count;
            q.Ready.Add(stream);
            q.Unrecord(stream.ReadyIndex);
        }
        IsDirty = true;
    }

    internal void QueueAck(InboundStream stream)
    {
        if (!stream.AckQueued)
        {
            stream.AckQueued = true;
            (stream.Queue ??= Queue(stream.JobId)).Acks.Add(stream);
        }
        IsDirty = true;
    }

    internal void AddRttSample(long sample) => _rtt.Add(sample);

    /// <summary>Sets or lifts (0) job <paramref name="jobId"/>'s rate limit on this port, if the job sends here.</summary>
    internal void ApplyLimit(ulong jobId, long bytesPerSecond)
    {
        foreach (var q in _jobs)
        {
            if (q.JobId == jobId)
            {
                q.Limit = bytesPerSecond == 0 ? null
                    : q.Limit?.BytesPerSecond == bytesPerSecond ? q.Limit
                    : new TokenBucket(bytesPerSecond, _transport.Context.Now);
                IsDirty = true;
            }
        }
    }

    /// <summary>Frame bytes job <paramref name="jobId"/>'s data frames took on this port (0 when it never sent here).</summary>
    public long JobBytesSent(ulong jobId)
    {
        foreach (var q in _jobs)
        {
            if (q.JobId == jobId)
            {
                return q.BytesSent;
            }
        }
        return 0;
    }

    /// <summary>
    /// Fills the service's runtime queue on this port. A data frame that would leave partly empty goes only when the
    /// queue is empty (the link would otherwise idle) or another job has streams ready here (<see cref="JobsReady"/>);
    /// otherwise, while frames are still queued, it waits for more bytes, and the runtime calls back at the next transmit.
    /// </summary>
    internal void Pump()
    {
        IsDirty = false;
        var context = _transport.Context;
        int capacity = _transport.Options.RuntimeQueueFrames;
        while (true)
        {
            int space = context.QueueSpace(WellKnownServices.Camdoop, Port);
            if (space == 0)
            {
                if (HasWork)
                {
                    context.RequestSendReady(WellKnownServices.Camdoop, Port);
                }
                return;
            }
            if (SendAckFrame())
            {
                continue;
            }
            switch (SendDataFrame(allowPartial: space >= capacity || JobsReady() > 1))
            {
                case FrameOutcome.Sent:
                    continue;
                case FrameOutcome.Deferred:
                    context.RequestSendReady(WellKnownServices.Camdoop, Port);
                    return;
                default:
                    return;
            }
        }
    }

    /// <summary>
    /// Jobs with streams ready on this port. With more than one, a partial frame is not held back: the link is busy
    /// with the other job's full frames, so a job whose window-bound streams wait for a full frame would wait at every
    /// hop, and its shuffle falls behind the other's (two vertical R=13 jobs took 1.25x and 1.86x of alone instead of
    /// 1.23x and 1.28x). One job alone keeps full frames.
    /// </summary>
    private int JobsReady()
    {
        int ready = 0;
        foreach (var q in _jobs)
        {
            if (q.Ready.Count > 0 && ++ready > 1)
            {
                break;
            }
        }
        return ready;
    }

    private enum FrameOutcome
    {
        Nothing,
        Sent,
        Deferred,
    }

    private JobQueue QueueOf(OutboundStream stream) => stream.Queue ??= Queue(stream.JobId);

    private JobQueue Queue(ulong jobId)
    {
        foreach (var q in _jobs)
        {
            if (q.JobId == jobId)
            {
                return q;
            }
        }
        var created = new JobQueue(jobId);
        long limit = _transport.JobLimit(jobId, Port);
        if (limit > 0)
        {
            created.Limit = new TokenBucket(limit, _transport.Context.Now);
        }
        _jobs.Add(created);
        return created;
    }

    /// <summary>Acks of one job (the first with any), as many as fit one frame, to one child vertex id.</summary>
    private bool SendAckFrame()
    {
        foreach (var q in _jobs)
        {
            if (q.Acks.Count == 0)
            {
                continue;
            }
            var frame = _transport.FrameBuffer;
            var key = q.Acks[0].ChildVertexId;
            int window = _transport.WindowBytes;
            int count = 0;
            int position = ShuffleWire.FrameHeaderSize;
            int kept = 0;
            for (int i = 0; i < q.Acks.Count; i++)
            {
                var s = q.Acks[i];
                if (count == ShuffleWire.MaxAcksPerFrame || s.ChildVertexId != key)
                {
                    q.Acks[kept++] = s;
                    continue;
                }
                var ack = s.TakeAck(window);
                ShuffleWire.WriteAck(frame.AsSpan(position), ack);
                position += ShuffleWire.AckEntrySize;
                count++;
            }
            q.Acks.RemoveRange(kept, q.Acks.Count - kept);
            ShuffleWire.WriteFrameHeader(frame, ShuffleFrameKind.Ack, count, q.JobId);
            var status = _transport.Router.RouteUrgent(WellKnownServices.Camdoop, key, frame.AsSpan(0, position), Port, out var port);
            if (status == SendStatus.Queued)
            {
                _transport.Counters.AckFramesSent++;
                _transport.Counters.AckEntriesSent += count;
            }
            else
            {
                // Lost before it left: the sender's timer or the next segment brings another ack.
                _transport.Counters.SendFailures++;
                if (status == SendStatus.QueueFull && port != Port)
                {
                    _transport.RequestSendReady(port);
                }
            }
            return true;
        }
        return false;
    }

    /// <summary>One data frame of the next job in turn: its lowest-key stream first, then others to the same vertex.</summary>
    private FrameOutcome SendDataFrame(bool allowPartial)
    {
        int jobs = _jobs.Count;
        var outcome = FrameOutcome.Nothing;
        long now = _transport.Context.Now;
        long limitedFor = long.MaxValue;
        for (int k = 0; k < jobs; k++)
        {
            int j = (_nextJob + k) % jobs;
            var q = _jobs[j];
            if (q.Limit is { } bucket && q.Ready.Count > 0)
            {
                // A whole frame's tokens, whatever this one will carry: a limited job never overdraws.
                long wait = bucket.WaitFor(MaxFrameBytes, now);
                if (wait > 0)
                {
                    limitedFor = Math.Min(limitedFor, wait);
                    continue;
                }
            }
            var first = PickLowest(q);
            if (first is null)
            {
                continue;
            }
            int room = FrameRoom(first);
            if (!allowPartial && !FillsAFrame(q, first, room))
            {
                outcome = FrameOutcome.Deferred;
                continue;
            }
            _nextJob = (j + 1) % jobs;
            // Not queued (a full queue): stop here, or this loop would build and take back the same frame forever.
            return SendFrame(q, first, room) ? FrameOutcome.Sent : FrameOutcome.Nothing;
        }
        if (limitedFor != long.MaxValue)
        {
            WakeWhenTokensReturn(now + limitedFor);
        }
        return outcome;
    }

    private void WakeWhenTokensReturn(long due)
    {
        long now = _transport.Context.Now;
        if (_tokensDue >= now && _tokensDue <= due)
        {
            return;
        }
        _tokensDue = due;
        _transport.Context.SetTimer(due - now, _onTokens);
    }

    private void OnTokensReturned()
    {
        if (_tokensDue <= _transport.Context.Now)
        {
            _tokensDue = -1;
        }
        Pump();
    }

    /// <summary>
    /// Payload room of a data frame led by <paramref name="first"/>. Every hop stores and forwards whole frames, so the
    /// root hears of a key a frame time per level after a leaf sent it: with jumbo frames about 1 ms on 8x8x8, a
    /// fifth of an S=0, R=1 shuffle, where every link carries the whole stripe and nothing fills the wait. A stream
    /// whose parent keeps up (half its window free) and that has carried little so far is on such a critical path:
    /// it goes in half frames, which halves the lag for 1-2 % more wire bytes. A back-pressured or long stream's
    /// bytes wait anyway, so it keeps full frames and their lower overhead.
    /// </summary>
    internal static int FrameRoom(OutboundStream first) =>
        first.SentHigh < ShortStreamBytes && first.WindowRoom >= first.MaxWindow / 2 ? ShortFramePayload : ShuffleWire.MaxPayload;

    /// <summary>Whether the job's ready streams to <paramref name="first"/>'s vertex fill <paramref name="room"/> (or send a probe).</summary>
    private static bool FillsAFrame(JobQueue q, OutboundStream first, int room)
    {
        long bytes = 0;
        foreach (var s in q.Ready)
        {
            if (s.Destination != first.Destination)
            {
                continue;
            }
            if (s.ProbeDue)
            {
                return true;
            }
            bytes += s.SendableBytes + ShuffleWire.SegmentHeaderSize;
            if (bytes >= room - ShuffleWire.FrameHeaderSize)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Builds and sends one data frame; false when it could not be queued (its bytes go back to the streams).</summary>
    private bool SendFrame(JobQueue q, OutboundStream first, int room)
    {
        long now = _transport.Context.Now;
        var counters = _transport.Counters;
        // Segments go straight into a pooled frame, after the room the runtime's headers take: each byte sent is
        // copied once here rather than again into the frame.
        var buffer = _transport.Context.Frames.Rent();
        var frame = buffer.Buffer.AsSpan(FrameLayout.PayloadOffset(keyRouted: true), room);
        var key = first.Destination;
        int position = ShuffleWire.FrameHeaderSize;
        int count = 0;
        _inFrame.Clear();
        var s = first;
        while (s is not null)
        {
            if (s.HasSendable)
            {
                _inFrame.Add((s, s.SendOffset));
                position += s.WriteSegment(frame[position..], now, counters);
            }
            else
            {
                position += s.WriteProbe(frame[position..], counters);
                s.OnProbeSent(now);
            }
            s.ProbeDue = false;
            count++;
            Watch(s);
            if (!s.HasSendable)
            {
                RemoveReady(q, s);
            }
            if (frame.Length - position < ShuffleWire.SegmentHeaderSize + 64)
            {
                break;
            }
            s = PickLowestTo(q, key);
        }
        ShuffleWire.WriteFrameHeader(frame, ShuffleFrameKind.Data, count, q.JobId);
        // On this scheduler's port: the tree's link (on a ring of two, both ports of an axis reach the same neighbour).
        var status = _transport.Router.Route(WellKnownServices.Camdoop, key, buffer, position, Port, out var port);
        if (status == SendStatus.Queued)
        {
            counters.DataFramesSent++;
            int wire = FrameLayout.PayloadOffset(keyRouted: true) + position;
            q.BytesSent += wire;
            q.Limit?.Take(wire);
            ArmTimer();
            return true;
        }
        // Not sent: give the bytes back to their streams; they go again when the port (or the timer) next runs.
        buffer.Release();
        counters.SendFailures++;
        foreach (var (stream, start) in _inFrame)
        {
            stream.Unsend(start);
        }
        if (status == SendStatus.QueueFull && port != Port)
        {
            _transport.RequestSendReady(port);
        }
        ArmTimer();
        return false;
    }

    /// <summary>
    /// The ready stream of the job with the lowest next key (ties: the latest in the list), dropping stale entries.
    /// Reads each stream only if it changed since the queue last recorded it (see <see cref="JobQueue"/>).
    /// </summary>
    private static OutboundStream? PickLowest(JobQueue q) => Pick(q, default, anyDestination: true);

    /// <summary>Like <see cref="PickLowest"/> among the streams to <paramref name="key"/>: the rest of a frame.</summary>
    private static OutboundStream? PickLowestTo(JobQueue q, Key key) => Pick(q, key, anyDestination: false);

    private static OutboundStream? Pick(JobQueue q, Key key, bool anyDestination)
    {
        OutboundStream? best = null;
        ulong bestPrefix = ulong.MaxValue;
        var ready = q.Ready;
        var prefixes = q.Prefixes;
        var destinations = q.Destinations;
        var recorded = q.Recorded;
        bool check = CheckRecords;
        for (int i = ready.Count - 1; i >= 0; i--)
        {
            if (!recorded[i] || check)
            {
                var s = ready[i];
                if (!s.HasSendable && !s.ProbeDue)
                {
                    if (recorded[i])
                    {
                        throw new InvalidOperationException($"stream {s.ReduceTask}/{s.Tree} became stale without telling its queue");
                    }
                    // Stale entry (acked, or waiting for the owner): drop it.
                    RemoveAt(q, i);
                    continue;
                }
                ulong current = s.TracksPriority ? s.NextKeyPrefix : 0;
                if (recorded[i] && (current != prefixes[i] || s.Destination != destinations[i]))
                {
                    throw new InvalidOperationException($"stream {s.ReduceTask}/{s.Tree} changed its next key without telling its queue");
                }
                prefixes[i] = current;
                destinations[i] = s.Destination;
                recorded[i] = true;
            }
            if (!anyDestination && destinations[i] != key)
            {
                continue;
            }
            ulong prefix = prefixes[i];
            if (best is null || prefix < bestPrefix)
            {
                best = ready[i];
                bestPrefix = prefix;
            }
        }
        return best;
    }

    private static void RemoveReady(JobQueue q, OutboundStream s)
    {
        if (!s.InReadyList || s.ProbeDue)
        {
            return;
        }
        Debug.Assert(ReferenceEquals(q.Ready[s.ReadyIndex], s), "a ready stream's index is its place in the list");
        RemoveAt(q, s.ReadyIndex);
    }

    /// <summary>Takes the stream at <paramref name="i"/> out of a ready list, the last one (and its record) taking its place.</summary>
    private static void RemoveAt(JobQueue q, int i)
    {
        var ready = q.Ready;
        var s = ready[i];
        int lastIndex = ready.Count - 1;
        var last = ready[lastIndex];
        ready[i] = last;
        last.ReadyIndex = i;
        q.Prefixes[i] = q.Prefixes[lastIndex];
        q.Destinations[i] = q.Destinations[lastIndex];
        q.Recorded[i] = q.Recorded[lastIndex];
        ready.RemoveAt(lastIndex);
        s.ReadyIndex = -1;
    }

    private void Watch(OutboundStream s)
    {
        if (!s.InWatchList)
        {
            s.InWatchList = true;
            _watch.Add(s);
        }
    }

    /// <summary>A stream moved here keeps its retransmission timer: this port's timer watches it from now on.</summary>
    internal void WatchMoved(OutboundStream s)
    {
        if (s.HasInFlight || s.IsWindowBlocked)
        {
            Watch(s);
            ArmTimer();
        }
    }

    internal void WatchBlocked(OutboundStream s)
    {
        if (s.IsWindowBlocked)
        {
            Watch(s);
            ArmTimer();
        }
    }

    private void ArmTimer()
    {
        if (_timerArmed || _watch.Count == 0)
        {
            return;
        }
        _timerArmed = true;
        _timerDue = _transport.Context.Now + RetransmitTimeout;
        _transport.Context.SetTimer(RetransmitTimeout, _onTimer);
    }

    /// <summary>
    /// Scans the streams with data in flight or a closed window: retransmits those without progress for an RTO
    /// (go-back-N), probes closed windows, drops finished ones, and re-arms at the earliest remaining deadline.
    /// </summary>
    private void OnTimer()
    {
        _timerArmed = false;
        var context = _transport.Context;
        long now = context.Now;
        long rto = RetransmitTimeout;
        long probe = _transport.Options.ZeroWindowProbeInterval;
        long maxWait = _transport.Options.MaxBackoffWait;
        long next = long.MaxValue;
        int kept = 0;
        for (int i = 0; i < _watch.Count; i++)
        {
            var s = _watch[i];
            long deadline = s.Deadline(rto, probe, maxWait);
            if (deadline == long.MaxValue)
            {
                s.InWatchList = false;
                continue;
            }
            if (deadline <= now)
            {
                if (s.HasInFlight)
                {
                    if (s.OnTimeout(now))
                    {
                        _transport.Counters.Timeouts++;
                    }
                }
                else
                {
                    s.ProbeDue = true;
                }
                MarkReady(s);
                deadline = s.Deadline(rto, probe, maxWait);
            }
            _watch[kept++] = s;
            next = Math.Min(next, deadline);
        }
        _watch.RemoveRange(kept, _watch.Count - kept);
        if (_watch.Count > 0)
        {
            _timerArmed = true;
            _timerDue = Math.Max(next, now + 1);
            context.SetTimer(_timerDue - now, _onTimer);
        }
        _transport.AfterTimer();
    }

    internal sealed class JobQueue(ulong jobId)
    {
        public ulong JobId { get; } = jobId;

        /// <summary>The first stream registered; once there is a second, every stream tracks its next key.</summary>
        public OutboundStream? FirstStream { get; set; }

        /// <summary>Streams with something to send (and stale ones, dropped when met), each knowing its index.</summary>
        public List<OutboundStream> Ready { get; } = [];

        // Per place in Ready, what the scheduler last read of the stream there (its next-key prefix and destination)
        // and whether that still holds: a stream clears its mark before any change the scheduler could see, so a
        // marked entry is known ready with that prefix. A frame reads only the streams acked, fed or sent since the
        // last (on 8x8x8 R = 512 a port has 57 ready streams on average, each an object the scan would touch).
        internal ulong[] Prefixes = new ulong[16];
        internal Key[] Destinations = new Key[16];
        internal bool[] Recorded = new bool[16];

        internal void Unrecord(int index)
        {
            if (index >= Recorded.Length)
            {
                int size = Math.Max(index + 1, Recorded.Length * 2);
                Array.Resize(ref Prefixes, size);
                Array.Resize(ref Destinations, size);
                Array.Resize(ref Recorded, size);
            }
            Recorded[index] = false;
        }

        public List<InboundStream> Acks { get; } = [];

        /// <summary>The job's rate limit on this port; null for none.</summary>
        public TokenBucket? Limit { get; set; }

        /// <summary>Frame bytes of the job's data frames queued on this port.</summary>
        public long BytesSent { get; set; }
    }
}
