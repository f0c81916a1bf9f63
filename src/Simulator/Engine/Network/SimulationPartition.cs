using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Network;

/// <summary>
/// A share of the cube's servers with its own event queue, clock and frame pool: the unit one thread runs (the
/// node driver of every host in it). Events it schedules for its own links and nodes go into its queue; a frame
/// that leaves on a link into another partition waits in its outbox until the partition stops, then in the
/// receiver's inbox until that one next runs, which is safe because no frame arrives sooner than the link delay
/// (<see cref="Simulation.Lookahead"/>) after it left and no partition runs more than that ahead of its senders.
/// </summary>
internal sealed class SimulationPartition : INodeDriver
{
    private readonly EventQueue _queue = new(4096);
    private readonly long[] _eventsByKind = new long[5];
    private readonly List<OutboundArrival> _outbox = [];
    private readonly Lock _inboxLock = new();
    private List<OutboundArrival> _inbox = [];
    private List<OutboundArrival> _inboxSpare = [];
    private long _now;
    private long _sequence;
    private readonly bool _rotateTies;

    public SimulationPartition(Simulation simulation, int index)
    {
        Simulation = simulation;
        Index = index;
        _rotateTies = !simulation.Topology.HasTorusLinks;
    }

    public Simulation Simulation { get; }

    public int Index { get; }

    public FramePool Frames { get; } = new(4096, threadSafe: false);

    public long Now => _now;

    public long NextTime => _queue.NextTime;

    public int Pending => _queue.Count;

    public long StaleEvents { get; private set; }

    public long EventsOf(EventKind kind) => _eventsByKind[(int)kind];

    public bool HasOutbound => _outbox.Count > 0;

    public bool TryPeek(out long time, out ulong order) => _queue.TryPeek(out time, out order);

    /// <summary>Moves the clock forward (never back): the run reached <paramref name="time"/> with nothing left before it.</summary>
    public void AdvanceTo(long time)
    {
        if (time > _now)
        {
            _now = time;
        }
    }

    private ulong NextOrder(int entity, long time)
    {
        if (_sequence > EventOrder.MaxSequence)
        {
            throw new InvalidOperationException("event sequence numbers exhausted");
        }
        // Switched networks rotate which input wins a tie (see EventOrder); the torus keeps its fixed order.
        return _rotateTies ? EventOrder.Of(entity, _sequence++, time) : EventOrder.Of(entity, _sequence++);
    }

    long INodeDriver.Now => _now;

    void INodeDriver.ScheduleTimer(NodeHost host, long dueTime, long timerId)
    {
        int index = Simulation.Torus.IndexOf(host.Self);
        if (!Simulation.IsCurrentHost(index, host))
        {
            return; // a dead incarnation's timer must never reach its successor
        }
        long time = Math.Max(dueTime, _now);
        _queue.Push(time, NextOrder(Simulation.TimerEntity(index), time), SimEvent.ForTimer(index, Simulation.BootOf(index), timerId));
    }

    void INodeDriver.Log(Coordinate node, LogLevel level, string message) => Simulation.Log(_now, node, level, message);

    void INodeDriver.Compute(NodeHost host, ComputeWork kind, long bytes)
    {
        if (!Simulation.PricesCompute)
        {
            return;
        }
        // Each host's core has its own rates: the servers' (when priced) or an agg box's.
        int index = Simulation.Torus.IndexOf(host.Self);
        var compute = Simulation.ComputeOf(index);
        if (compute is not null && Simulation.IsCurrentHost(index, host))
        {
            compute.Charge(_now, kind, compute.Rates.CostNs(kind, bytes));
        }
    }

    // After declaring work a service's clock reads the end of it: a root that reduces its last bytes completes when
    // that work does, and timers it sets then count from there.
    long INodeDriver.NowOf(NodeHost host)
    {
        if (!Simulation.PricesCompute)
        {
            return _now;
        }
        long free = Simulation.ComputeOf(Simulation.Torus.IndexOf(host.Self))?.BusyUntil ?? 0;
        return free > _now ? free : _now;
    }

    /// <summary>When server <paramref name="index"/>'s core is free: frames it hands its links start no earlier.</summary>
    public long ComputeFreeAt(int index) => Simulation.ComputeOf(index)?.BusyUntil ?? 0;

    /// <summary>The frame at the head of <paramref name="link"/>'s ring starts serialising now, or at <paramref name="notBefore"/> if later.</summary>
    public void ScheduleTransmitComplete(SimulatedLink link, int frameLength, long notBefore)
    {
        long time = Math.Max(_now, notBefore) + link.SerialisationTime(Simulation, frameLength);
        _queue.Push(time, NextOrder(link.Index, time), SimEvent.ForLink(EventKind.TransmitComplete, link.Index, link.Epoch) with { Arg = link.TransmitTicket });
    }

    /// <summary>
    /// The frame has left on <paramref name="link"/>: it arrives a fixed delay from now. Arrivals are scheduled in
    /// time order, so they take the queue's FIFO lane; across partitions the frame waits in the outbox.
    /// </summary>
    public void ScheduleArrival(SimulatedLink link, Frame frame)
    {
        long time = _now + Simulation.ArrivalDelay;
        ulong order = NextOrder(link.Index, time);
        if (ReferenceEquals(link.Receiver, this))
        {
            QueueArrival(link, frame, time, order);
        }
        else
        {
            _outbox.Add(new OutboundArrival(time, order, link, frame, link.Epoch));
        }
    }

    /// <summary>Hands every frame in the outbox to its receiving partition (neither may be running: one-thread runs).</summary>
    public void DeliverOutbound()
    {
        foreach (var a in _outbox)
        {
            a.Link.Receiver.Accept(a);
        }
        _outbox.Clear();
    }

    /// <summary>
    /// Posts every frame in the outbox to its receiving partition's inbox, which may be running on another thread:
    /// it takes them in (<see cref="TakeInbox"/>) before it next runs.
    /// </summary>
    public void PostOutbound()
    {
        var outbox = _outbox;
        for (int i = 0; i < outbox.Count; i++)
        {
            var receiver = outbox[i].Link.Receiver;
            lock (receiver._inboxLock)
            {
                receiver._inbox.Add(outbox[i]);
            }
        }
        outbox.Clear();
    }

    /// <summary>Queues the frames other partitions posted to this one (on the thread that runs it).</summary>
    public void TakeInbox()
    {
        List<OutboundArrival> taken;
        lock (_inboxLock)
        {
            if (_inbox.Count == 0)
            {
                return;
            }
            taken = _inbox;
            _inbox = _inboxSpare;
            _inboxSpare = taken;
        }
        foreach (var a in taken)
        {
            Accept(a);
        }
        taken.Clear();
    }

    private void Accept(in OutboundArrival arrival)
    {
        var link = arrival.Link;
        if (arrival.Epoch != link.Epoch)
        {
            // The link or its sender failed since the frame left: it is lost like the rest of the wire.
            arrival.Frame.Release();
            return;
        }
        Frames.Adopt(arrival.Frame);
        QueueArrival(link, arrival.Frame, arrival.Time, arrival.Order);
    }

    /// <summary>The frame is on the receiving side of <paramref name="link"/>, this partition's; it arrives at <paramref name="time"/>.</summary>
    private void QueueArrival(SimulatedLink link, Frame frame, long time, ulong order)
    {
        link.PutOnWire(frame);
        _queue.PushOrdered(time, order, SimEvent.ForLink(EventKind.FrameArrival, link.Index, link.Epoch));
    }

    /// <summary>Processes every event due before <paramref name="bound"/> (one step of a parallel run).</summary>
    public void RunBefore(long bound)
    {
        while (ProcessNext(bound - 1, out _))
        {
        }
    }

    /// <summary>Processes the earliest event if it is due at or before <paramref name="limit"/>.</summary>
    public bool ProcessNext(long limit, out EventKind kind)
    {
        if (!_queue.TryPop(limit, out long time, out var ev))
        {
            kind = default;
            return false;
        }
        _now = time;
        kind = ev.Kind;
        _eventsByKind[(int)kind]++;
        switch (kind)
        {
            case EventKind.TransmitComplete:
                var link = Simulation.LinkAt(ev.Target);
                // A coalescing link that woke early (its trigger filled) rescheduled its head: the old event is void.
                if (ev.Arg == link.TransmitTicket)
                {
                    OnTransmitComplete(link, ev.Epoch);
                }
                break;
            case EventKind.FrameArrival:
                if (!Deferred(Simulation.LinkAt(ev.Target).ToIndex, ev))
                {
                    OnArrival(Simulation.LinkAt(ev.Target), ev.Epoch);
                }
                break;
            case EventKind.ComputeDone:
                OnComputeDone(ev.Target);
                break;
            default:
                if (!Deferred(ev.Target, ev))
                {
                    OnTimer(ev.Target, ev.Epoch, ev.Arg);
                }
                break;
        }
        return true;
    }

    /// <summary>
    /// Holds <paramref name="ev"/> back when server <paramref name="node"/>'s core is busy, or events that fell due
    /// earlier still wait for it (they keep their order), and makes sure a wake-up is due when the core is free.
    /// </summary>
    private bool Deferred(int node, in SimEvent ev)
    {
        var compute = Simulation.ComputeOf(node);
        if (compute is null || !compute.IsBusy(_now))
        {
            return false;
        }
        if (compute.Backlog.Count == 0)
        {
            ScheduleWake(node, compute.BusyUntil);
        }
        compute.Backlog.Enqueue(ev);
        return true;
    }

    // The wake-up is an event of the server's timer entity, which only this partition schedules: the same order
    // whatever the split.
    private void ScheduleWake(int node, long time) =>
        _queue.Push(time, NextOrder(Simulation.TimerEntity(node), time), new SimEvent(EventKind.ComputeDone, node, 0, 0));

    /// <summary>The core is free: run the events that waited, in order, until one of them makes it busy again.</summary>
    private void OnComputeDone(int node)
    {
        var compute = Simulation.ComputeOf(node)!;
        var backlog = compute.Backlog;
        while (backlog.Count > 0)
        {
            if (compute.BusyUntil > _now)
            {
                ScheduleWake(node, compute.BusyUntil);
                return;
            }
            var ev = backlog.Dequeue();
            switch (ev.Kind)
            {
                case EventKind.TransmitComplete:
                    NotifyTransmitReady(Simulation.LinkAt(ev.Target), ev.Epoch);
                    break;
                case EventKind.FrameArrival:
                    OnArrival(Simulation.LinkAt(ev.Target), ev.Epoch);
                    break;
                default:
                    OnTimer(ev.Target, ev.Epoch, ev.Arg);
                    break;
            }
        }
    }

    public void Clear()
    {
        _queue.Clear();
        foreach (var a in _outbox)
        {
            a.Frame.Release();
        }
        _outbox.Clear();
        lock (_inboxLock)
        {
            foreach (var a in _inbox)
            {
                a.Frame.Release();
            }
            _inbox.Clear();
        }
    }

    private void OnTransmitComplete(SimulatedLink link, int epoch)
    {
        var trace = Simulation.Trace;
        if (epoch != link.Epoch)
        {
            StaleEvents++;
            trace?.Record(_now, EventKind.TransmitComplete, link.FromIndex, (int)link.Port, -1);
            return;
        }
        trace?.Record(_now, EventKind.TransmitComplete, link.FromIndex, (int)link.Port, link.HeadLength(wire: false));
        link.CompleteTransmit();
        // The NIC moves on to its next frame at once; refilling its ring is the host's work and waits for its core.
        if (!Deferred(link.FromIndex, SimEvent.ForLink(EventKind.TransmitComplete, link.Index, epoch)))
        {
            NotifyTransmitReady(link, epoch);
        }
    }

    private void NotifyTransmitReady(SimulatedLink link, int epoch)
    {
        int from = link.FromIndex;
        if (epoch == link.Epoch && from < Simulation.ServerCount && !Simulation.IsFailed(from))
        {
            Simulation.HostAt(from).OnTransmitReady(link.Port);
        }
    }

    private void OnArrival(SimulatedLink link, int epoch)
    {
        var trace = Simulation.Trace;
        if (epoch != link.Epoch)
        {
            StaleEvents++;
            trace?.Record(_now, EventKind.FrameArrival, link.ToIndex, (int)link.ToPort, -1);
            return;
        }
        trace?.Record(_now, EventKind.FrameArrival, link.ToIndex, (int)link.ToPort, link.HeadLength(wire: true));
        int to = link.ToIndex;
        var frame = link.Arrive(Simulation.IsFailed(to));
        if (frame is null)
        {
            return;
        }
        if (to < Simulation.ServerCount)
        {
            // Per-frame software cost, when priced: the core takes the frame in before any service sees it, so what
            // the services do with it (and every later event of the server) waits for that.
            if (Simulation.ComputeOf(to) is { Rates.FrameNanoseconds: > 0 } compute)
            {
                compute.ChargeFrame(_now);
            }
            Simulation.HostAt(to).OnFrameReceived(link.ToPort, frame);
        }
        else
        {
            Simulation.SwitchAt(to).OnFrame(frame);
        }
    }

    private void OnTimer(int node, int boot, long timerId)
    {
        Simulation.Trace?.Record(_now, EventKind.Timer, node, Simulation.NoPort, 0);
        if (Simulation.BootOf(node) == boot && !Simulation.IsFailed(node))
        {
            Simulation.HostAt(node).FireTimer(timerId);
        }
    }

    /// <summary>A frame bound for another partition, with the arrival event it will get there.</summary>
    private readonly record struct OutboundArrival(long Time, ulong Order, SimulatedLink Link, Frame Frame, int Epoch);
}
