using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

// Outbound side: per-service queues per port, drained by deficit round robin into the link's transmit ring.
public sealed partial class NodeHost
{
    /// <summary>Each visit to a queue earns one jumbo frame of credit (byte fairness): jumbo frames alternate strictly, smaller ones go several per visit.</summary>
    private const int Quantum = FrameLayout.MaxFrameSize;

    private readonly List<ServiceQueue>[] _portQueues = new List<ServiceQueue>[Ports.Count];
    private readonly byte[] _queueSlot = new byte[256];
    private readonly int[] _rrNext = new int[Ports.Count];
    private readonly bool[] _visitOpen = new bool[Ports.Count];
    private readonly int[][] _deficit = new int[Ports.Count][];
    private bool _pumping;

    public int QueueSpace(byte serviceId, Port port) =>
        _services[serviceId] is null ? 0 : _portQueues[(int)port][_queueSlot[serviceId]].Space;

    public void RequestSendReady(byte serviceId, Port port)
    {
        if (_services[serviceId] is not null)
        {
            _portQueues[(int)port][_queueSlot[serviceId]].WantsReadyNotice = true;
        }
    }

    /// <summary>What service <paramref name="serviceId"/>'s queue on <paramref name="port"/> admitted and sent (zeros for an unknown service).</summary>
    public ServiceQueueCounters QueueCounters(byte serviceId, Port port) =>
        _services[serviceId] is null ? default : _portQueues[(int)port][_queueSlot[serviceId]].Counters;

    /// <summary>Frames waiting in the service's queue on <paramref name="port"/>.</summary>
    public int QueueLength(byte serviceId, Port port) =>
        _services[serviceId] is null ? 0 : _portQueues[(int)port][_queueSlot[serviceId]].Count;

    public SendStatus TrySend(Port port, ref FrameHeader header, ReadOnlySpan<byte> key, ReadOnlySpan<byte> payload)
    {
        var status = CheckSend(port, header.ServiceId, out var queue);
        if (status != SendStatus.Queued)
        {
            return status;
        }
        var frame = Encode(ref header, key, payload);
        queue!.TryEnqueue(frame);
        Pump(port);
        return SendStatus.Queued;
    }

    public SendStatus TrySend(Port port, ref FrameHeader header, ReadOnlySpan<byte> key, Frame frame, int payloadLength)
    {
        ArgumentNullException.ThrowIfNull(frame);
        var status = CheckSend(port, header.ServiceId, out var queue);
        if (status != SendStatus.Queued)
        {
            return status;
        }
        // The headers are written around the payload in place; a bad header throws before the queue takes the frame.
        int offset = FrameCodec.WriteHeader(frame.Buffer, ref header, key, payloadLength);
        frame.Length = FrameCodec.Finish(frame.Buffer, offset + payloadLength);
        queue!.TryEnqueue(frame);
        Pump(port);
        return SendStatus.Queued;
    }

    public SendStatus TryForward(in InboundFrame frame, Port port)
    {
        var buffer = frame.Buffer;
        if (_halted || !CanCarry(port, frame.Header.ServiceId))
        {
            CountForwardDrop(port);
            return SendStatus.LinkDown;
        }
        if (ReferenceEquals(_dispatchConsumed, buffer))
        {
            // The buffer is already queued; a second queue would give it two owners.
            throw new InvalidOperationException("a received frame can be forwarded only once");
        }
        var queue = _portQueues[(int)port][_queueSlot[frame.Header.ServiceId]];
        bool urgent = (frame.Header.Flags & FrameFlags.Urgent) != 0;
        if ((urgent ? queue.UrgentSpace : queue.TransitSpace) == 0)
        {
            // Transit frames are not pushed back: the end-to-end transport recovers them.
            CountForwardDrop(port);
            return SendStatus.QueueFull;
        }
        if (!FrameCodec.TryDecrementTtl(buffer.Span))
        {
            CountForwardDrop(port);
            Counters.Rejected[(int)FrameError.TtlExpired]++;
            return SendStatus.TtlExpired;
        }
        _dispatchConsumed = buffer;
        if (urgent)
        {
            queue.TryEnqueueUrgent(buffer);
        }
        else
        {
            queue.TryEnqueueTransit(buffer);
        }
        Counters.FramesForwarded++;
        Pump(port);
        return SendStatus.Queued;
    }

    /// <summary>Whether service <paramref name="serviceId"/> may queue a frame on <paramref name="port"/> now (Queued if so), and its queue.</summary>
    private SendStatus CheckSend(Port port, byte serviceId, out ServiceQueue? queue)
    {
        queue = null;
        if (_halted)
        {
            return SendStatus.LinkDown;
        }
        if (_services[serviceId] is null)
        {
            throw new InvalidOperationException($"service id {serviceId} is not registered on {Self}");
        }
        if (!CanCarry(port, serviceId))
        {
            Counters.SentOnDownLink++;
            return SendStatus.LinkDown;
        }
        queue = _portQueues[(int)port][_queueSlot[serviceId]];
        if (queue.Space == 0)
        {
            queue.WantsReadyNotice = true;
            Counters.QueueFull++;
            return SendStatus.QueueFull;
        }
        return SendStatus.Queued;
    }

    /// <summary>Rents a frame and encodes into it; a bad header or oversized payload throws without leaking the frame.</summary>
    private Frame Encode(ref FrameHeader header, ReadOnlySpan<byte> key, ReadOnlySpan<byte> payload)
    {
        var frame = Frames.Rent();
        try
        {
            frame.Length = FrameCodec.Write(frame.Buffer, ref header, key, payload);
        }
        catch
        {
            frame.Release();
            throw;
        }
        return frame;
    }

    /// <summary>Moves frames from the service queues into the link while it has room (deficit round robin).</summary>
    private void Pump(Port port)
    {
        var link = _links[(int)port];
        if (link is null || _pumping)
        {
            return;
        }
        _pumping = true;
        try
        {
            int p = (int)port;
            var queues = _portQueues[p];
            var deficit = _deficit[p] ??= new int[queues.Count];
            if (deficit.Length != queues.Count)
            {
                Array.Resize(ref deficit, queues.Count);
                _deficit[p] = deficit;
            }
            int idle = 0;
            long now = Now;
            long limitedFor = long.MaxValue;
            while (link.CanSend && idle < queues.Count)
            {
                int i = _rrNext[p];
                var q = queues[i];
                if (q.Count == 0 || (q.Limit is { } bucket && !HasTokens(bucket, q.Peek().Length, now, ref limitedFor)))
                {
                    // Empty, or rate-limited until its bucket fills: the others take the link (work-conserving).
                    deficit[i] = 0;
                    _visitOpen[p] = false;
                    _rrNext[p] = i + 1 == queues.Count ? 0 : i + 1;
                    idle++;
                    continue;
                }
                idle = 0;
                if (!_visitOpen[p])
                {
                    deficit[i] += Quantum;
                    _visitOpen[p] = true;
                }
                var head = q.Peek();
                if (head.Length > deficit[i])
                {
                    _visitOpen[p] = false;
                    _rrNext[p] = i + 1 == queues.Count ? 0 : i + 1;
                    continue;
                }
                q.Dequeue();
                deficit[i] -= head.Length;
                int length = head.Length;
                q.Limit?.Take(length);
                if (link.TrySend(head))
                {
                    Counters.FramesSent[p]++;
                    Counters.BytesSent[p] += length;
                    q.CountSent(length);
                }
                else
                {
                    head.Release();
                }
            }
            // The loop stops with a full scan of empty (or rate-limited) queues, or with the link full: only in the
            // second case are frames waiting for the link.
            MarkBacklog(p, idle < queues.Count && AnyWaiting(queues));
            if (limitedFor != long.MaxValue && link.CanSend)
            {
                WakeWhenTokensReturn(port, now + limitedFor);
            }
        }
        finally
        {
            _pumping = false;
        }
    }

    /// <summary>A transit frame this server did not forward on <paramref name="port"/>.</summary>
    private void CountForwardDrop(Port port)
    {
        Counters.ForwardDropped++;
        Counters.PortDrops[(int)port]++;
    }

    private static bool AnyWaiting(List<ServiceQueue> queues)
    {
        foreach (var q in queues)
        {
            if (q.Count > 0)
            {
                return true;
            }
        }
        return false;
    }

    /// <summary>Opens or closes the port's backlog interval (<see cref="NodeCounters.BacklogNs"/>).</summary>
    private void MarkBacklog(int port, bool waiting)
    {
        long since = Counters.BacklogSince[port];
        if (waiting && since < 0)
        {
            Counters.BacklogSince[port] = Now;
        }
        else if (!waiting && since >= 0)
        {
            Counters.BacklogNs[port] += Math.Max(0, Now - since);
            Counters.BacklogSince[port] = -1;
        }
    }

    /// <summary>Tells services whose sends were refused on <paramref name="port"/> that their queue has room again.</summary>
    private void NotifySendReady(Port port)
    {
        var queues = _portQueues[(int)port];
        for (int i = 0; i < queues.Count; i++)
        {
            var q = queues[i];
            if (q.WantsReadyNotice && q.Space > 0)
            {
                q.WantsReadyNotice = false;
                var service = _services[q.ServiceId]!;
                Guard(service, static (svc, state) => svc.OnSendReady(state), port);
            }
        }
    }

    /// <summary>Drops everything queued on a port whose link went down.</summary>
    private void FlushPort(Port port)
    {
        foreach (var q in _portQueues[(int)port])
        {
            int flushed = q.Flush();
            Counters.QueueFlushed += flushed;
            Counters.PortDrops[(int)port] += flushed;
            q.WantsReadyNotice = false;
        }
        MarkBacklog((int)port, false);
    }

    public void OnTransmitReady(Port port)
    {
        if (_halted)
        {
            return;
        }
        Pump(port);
        NotifySendReady(port);
    }
}
