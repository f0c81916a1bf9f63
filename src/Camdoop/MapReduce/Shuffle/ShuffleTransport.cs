using Camdoop.KeyRouting;
using Camdoop.MapReduce.Buffers;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>
/// One server's shuffle transport: a <see cref="PortScheduler"/> per port, the shared frame buffer, the counters,
/// and the memory budget that sets every inbound stream's receive window (the budget split evenly over the inbound
/// streams of all running jobs, within [min, max] window, recomputed when jobs start or finish).
/// </summary>
public sealed class ShuffleTransport
{
    /// <summary>A port mask of every port (bit n: port n).</summary>
    public const int AllPorts = (1 << Ports.Count) - 1;

    private readonly PortScheduler[] _ports = new PortScheduler[Ports.Count];
    private readonly Action _afterTimer;
    private readonly Dictionary<ulong, long[]> _jobLimits = [];

    // Resume requests waiting to be sent, per (job, destination): batched into Control frames, kept when a queue is full.
    private readonly List<(ulong JobId, Key Destination, List<byte[]> Entries)> _control = [];

    public ShuffleTransport(INodeContext context, KeyRoutingService router, ShuffleOptions options, Action afterTimer)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(router);
        ArgumentNullException.ThrowIfNull(options);
        Context = context;
        Router = router;
        Options = options;
        _afterTimer = afterTimer;
        foreach (var port in Ports.All)
        {
            _ports[(int)port] = new PortScheduler(this, port);
        }
        WindowBytes = options.MaxWindowBytes;
    }

    public INodeContext Context { get; }

    public KeyRoutingService Router { get; }

    public ShuffleOptions Options { get; }

    public ShuffleCounters Counters { get; } = new();

    /// <summary>This server's shuffle buffers: send buffers, children's stashes and vertex mergers' inputs.</summary>
    public ShuffleBufferPool Buffers { get; } = new();

    /// <summary>Scratch space for the frame being built (frames are built and sent one at a time).</summary>
    internal byte[] FrameBuffer { get; } = new byte[ShuffleWire.MaxPayload];

    /// <summary>The receive window every inbound stream advertises now.</summary>
    public int WindowBytes { get; private set; }

    /// <summary>
    /// What a vertex reserves for each child's merger input up front (see <see cref="Merge.StreamMerger.Reserve"/>):
    /// one and a half windows, so a full window never makes the buffer grow, but only when every inbound stream's
    /// reservation fits the budget; otherwise 0. When the budget is split thin (R = N: thousands of streams, most
    /// carrying little), buffers grow on demand instead; on 8x8x8 R = 512 reserving took 15.7 GB instead of 11.6 GB.
    /// </summary>
    public int MergerInputReserveBytes { get; private set; }

    /// <summary>Received bytes after which an ack goes out even if the sender did not ask: a quarter window.</summary>
    public int AckEveryBytes => Math.Max(WindowBytes / 4, ShuffleWire.MaxSegmentBytes);

    public PortScheduler Scheduler(Port port) => _ports[(int)port];

    /// <summary>Splits <paramref name="budgetBytes"/> over <paramref name="inboundStreams"/> streams.</summary>
    public void SetBudget(long budgetBytes, long inboundStreams)
    {
        long share = inboundStreams <= 0 ? Options.MaxWindowBytes : budgetBytes / inboundStreams;
        WindowBytes = (int)Math.Clamp(share, Options.MinWindowBytes, Options.MaxWindowBytes);
        int reserve = WindowBytes + (WindowBytes >> 1);
        MergerInputReserveBytes = share >= reserve ? reserve : 0;
    }

    public void Register(OutboundStream stream) => _ports[(int)stream.Port].Register(stream);

    /// <summary>Moves a stream to the scheduler of <paramref name="port"/> (its route's first hop changed).</summary>
    public void Move(OutboundStream stream, Port port)
    {
        ArgumentNullException.ThrowIfNull(stream);
        if (stream.Port == port)
        {
            return;
        }
        var old = stream.Port;
        _ports[(int)old].Detach(stream);
        stream.Port = port;
        var scheduler = _ports[(int)port];
        scheduler.Register(stream);
        if (stream.HasInFlight && !Context.IsLinkUp(old))
        {
            // What was in flight on a link that went down is lost: send it again now rather than after a timeout.
            stream.Rewind();
        }
        scheduler.MarkReady(stream);
        scheduler.WatchMoved(stream);
    }

    /// <summary>Forgets a dropped stream: its scheduler no longer sends or watches it.</summary>
    public void Forget(OutboundStream stream)
    {
        ArgumentNullException.ThrowIfNull(stream);
        _ports[(int)stream.Port].Detach(stream);
        stream.Discard();
    }

    /// <summary>Forgets a dropped inbound stream's pending ack.</summary>
    public void Forget(InboundStream stream)
    {
        ArgumentNullException.ThrowIfNull(stream);
        _ports[(int)stream.Port].DetachAck(stream);
        stream.ReleaseStash(Buffers);
    }

    /// <summary>Moves where an inbound stream's acks are sent from.</summary>
    public void Move(InboundStream stream, Port port)
    {
        ArgumentNullException.ThrowIfNull(stream);
        if (stream.Port == port)
        {
            return;
        }
        bool queued = stream.AckQueued;
        _ports[(int)stream.Port].DetachAck(stream);
        stream.Port = port;
        if (queued)
        {
            QueueAck(stream);
        }
    }

    public void Unregister(ulong jobId)
    {
        foreach (var p in _ports)
        {
            p.Unregister(jobId);
        }
        _jobLimits.Remove(jobId);
    }

    /// <summary>
    /// Caps the frame bytes job <paramref name="jobId"/>'s streams send per second on each port of
    /// <paramref name="portMask"/> (bit n: port n) at <paramref name="bytesPerSecond"/>; 0 lifts it there. The job may
    /// start here later: the limit waits for it, and goes with it when it ends.
    /// </summary>
    public void SetJobLimit(ulong jobId, long bytesPerSecond, int portMask = AllPorts)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(bytesPerSecond);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(bytesPerSecond, TokenBucket.MaxBytesPerSecond);
        if (!_jobLimits.TryGetValue(jobId, out var rates))
        {
            if (bytesPerSecond == 0)
            {
                return;
            }
            rates = new long[Ports.Count];
            _jobLimits.Add(jobId, rates);
        }
        foreach (var port in Ports.All)
        {
            if ((portMask & (1 << (int)port)) != 0)
            {
                rates[(int)port] = bytesPerSecond;
                _ports[(int)port].ApplyLimit(jobId, bytesPerSecond);
            }
        }
        if (Array.TrueForAll(rates, r => r == 0))
        {
            _jobLimits.Remove(jobId);
        }
        Flush();
    }

    /// <summary>Job <paramref name="jobId"/>'s limit on <paramref name="port"/>, bytes per second; 0 for none.</summary>
    public long JobLimit(ulong jobId, Port port) => _jobLimits.TryGetValue(jobId, out var rates) ? rates[(int)port] : 0;

    /// <summary>The jobs with a limit on some port here (running here or not yet).</summary>
    public IEnumerable<ulong> LimitedJobs => _jobLimits.Keys;

    /// <summary>The stream may have something to send (new bytes, an opened window, a rewind, its FIN).</summary>
    public void MarkReady(OutboundStream stream) => _ports[(int)stream.Port].MarkReady(stream);

    public void QueueAck(InboundStream stream) => _ports[(int)stream.Port].QueueAck(stream);

    /// <summary>After an ack was applied: feed the RTT estimate, and watch the stream if its window closed.</summary>
    public void OnAckApplied(OutboundStream stream, long rttSample)
    {
        var scheduler = _ports[(int)stream.Port];
        if (rttSample >= 0)
        {
            scheduler.AddRttSample(rttSample);
        }
        if (stream.HasSendable)
        {
            scheduler.MarkReady(stream);
        }
        else
        {
            scheduler.WatchBlocked(stream);
        }
    }

    /// <summary>
    /// Queues a resume request (an encoded entry, <see cref="ShuffleWire.WriteResume"/>) of job <paramref name="jobId"/>
    /// for the server <paramref name="destination"/> routes to; sent at the next flush, several to one server in a frame.
    /// </summary>
    public void QueueControl(ulong jobId, Key destination, byte[] entry)
    {
        ArgumentNullException.ThrowIfNull(entry);
        foreach (var (job, key, entries) in _control)
        {
            if (job == jobId && key == destination)
            {
                entries.Add(entry);
                return;
            }
        }
        _control.Add((jobId, destination, [entry]));
    }

    /// <summary>Sends the queued resume requests that fit the queues now.</summary>
    private void FlushControl()
    {
        int kept = 0;
        for (int i = 0; i < _control.Count; i++)
        {
            var (jobId, destination, entries) = _control[i];
            while (entries.Count > 0)
            {
                var frame = FrameBuffer;
                int position = ShuffleWire.FrameHeaderSize;
                int count = 0;
                while (count < entries.Count && position + entries[count].Length <= frame.Length && count < ushort.MaxValue)
                {
                    entries[count].CopyTo(frame, position);
                    position += entries[count].Length;
                    count++;
                }
                if (count == 0)
                {
                    // An entry larger than a frame (its sender checks for this): drop it rather than send empty frames.
                    Counters.SendFailures++;
                    entries.RemoveAt(0);
                    continue;
                }
                ShuffleWire.WriteFrameHeader(frame, ShuffleFrameKind.Control, count, jobId);
                var status = Router.RouteUrgent(WellKnownServices.Camdoop, destination, frame.AsSpan(0, position), preferred: null, out var port);
                if (status == SendStatus.QueueFull)
                {
                    RequestSendReady(port);
                    break;
                }
                if (status == SendStatus.Queued)
                {
                    Counters.ResumesSent += count;
                }
                else
                {
                    Counters.SendFailures++; // unreachable: the requester's retry asks again
                }
                entries.RemoveRange(0, count);
            }
            if (entries.Count > 0)
            {
                _control[kept++] = _control[i];
            }
        }
        _control.RemoveRange(kept, _control.Count - kept);
    }

    /// <summary>Sends what can be sent on every port with new work.</summary>
    public void Flush()
    {
        if (_control.Count > 0)
        {
            FlushControl();
        }
        foreach (var p in _ports)
        {
            if (p.IsDirty)
            {
                p.Pump();
            }
        }
    }

    public void OnSendReady(Port port)
    {
        if (_control.Count > 0)
        {
            FlushControl();
        }
        _ports[(int)port].Pump();
    }

    internal void AfterTimer() => _afterTimer();

    /// <summary>Asks the runtime for OnSendReady(<paramref name="port"/>) at the port's next transmit.</summary>
    internal void RequestSendReady(Port port) => Context.RequestSendReady(WellKnownServices.Camdoop, port);
}
