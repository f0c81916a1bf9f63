using System.Diagnostics;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Network;

// Driving the run: one event at a time in (time, order) across partitions, or partitions in parallel between meetings.
// Scheduled actions (failures, test hooks) run on the driving thread, before any event due at the same time.
public sealed partial class Simulation
{
    /// <summary>The trace's port for events that concern no link (timers, actions).</summary>
    internal const int NoPort = 0xFF;

    /// <summary>
    /// Link delays of virtual time a parallel run covers between two meetings of the threads (where actions run, the
    /// predicate is checked and frame pools are evened out). Inside, partitions synchronise with their neighbours only.
    /// </summary>
    private const int ParallelRunLookaheads = 64;

    private readonly EventQueue _actionQueue = new(16);
    private readonly ActionTable _actions = new();
    private long _actionSequence;
    private long _actionsRun;
    private long _now;
    private long _wallTicks;
    private PartitionWorkers? _workers;
    private bool _inParallelRun;

    /// <summary>Events processed so far, all kinds.</summary>
    public long EventsProcessed
    {
        get
        {
            long total = _actionsRun;
            foreach (var p in _partitions)
            {
                total += p.EventsOf(EventKind.Timer) + p.EventsOf(EventKind.TransmitComplete) + p.EventsOf(EventKind.FrameArrival)
                    + p.EventsOf(EventKind.ComputeDone);
            }
            return total;
        }
    }

    /// <summary>Transmit-complete and frame-arrival events processed.</summary>
    public long FrameEventsProcessed => EventsOf(EventKind.TransmitComplete) + EventsOf(EventKind.FrameArrival);

    public long EventsOf(EventKind kind) => kind == EventKind.Action ? _actionsRun : _partitions.Sum(p => p.EventsOf(kind));

    /// <summary>Events that were void when they fell due (a failed link's or a crashed server's frames).</summary>
    public long StaleEvents => _partitions.Sum(p => p.StaleEvents);

    /// <summary>Events waiting, scheduled actions included.</summary>
    public int PendingEvents => _actionQueue.Count + _partitions.Sum(p => p.Pending);

    /// <summary>Time of the next event, or <see cref="long.MaxValue"/> when none is pending.</summary>
    public long NextEventTime => Math.Min(_actionQueue.NextTime, _partitions.Min(p => p.NextTime));

    /// <summary>Parallel runs between meetings of the threads so far (see <see cref="RunsInParallel"/>).</summary>
    public long ParallelRuns => _workers?.Runs ?? 0;

    /// <summary>
    /// CPU seconds of the worker threads that ran partitions beside the driving thread (the one calling RunUntil);
    /// 0 with one thread, or where thread CPU time is not available.
    /// </summary>
    public double WorkerCpuSeconds => (_workers?.WorkerCpuNanoseconds ?? 0) / 1e9;

    /// <summary>Wall-clock time spent inside the run methods.</summary>
    public TimeSpan WallTime => Stopwatch.GetElapsedTime(0, _wallTicks);

    /// <summary>Events processed per wall-clock second so far.</summary>
    public double EventsPerSecond => _wallTicks == 0 ? 0 : EventsProcessed / WallTime.TotalSeconds;

    /// <summary>
    /// Whether runs use a thread per partition: more than one partition, a link delay to run ahead by, and no trace
    /// (the trace records events in their one global order).
    /// </summary>
    public bool RunsInParallel => Threads > 1 && Trace is null && Lookahead > 0;

    /// <summary>
    /// Runs <paramref name="action"/> at virtual time <paramref name="at"/>, on the driving thread, before any event
    /// due at that time that has not run yet (after actions scheduled before it for the same time).
    /// </summary>
    public void Schedule(long at, Action action)
    {
        ArgumentNullException.ThrowIfNull(action);
        if (_inParallelRun)
        {
            throw new InvalidOperationException("schedule actions from the thread that drives the simulation, not from inside an event");
        }
        if (at < _now)
        {
            throw new ArgumentOutOfRangeException(nameof(at), at, $"time {at} is in the past (now {_now})");
        }
        _actionQueue.Push(at, (ulong)_actionSequence++, SimEvent.ForAction(_actions.Add(action)));
    }

    /// <summary>
    /// Calls <paramref name="perServer"/> with every server's index, from an action or between runs (never from
    /// inside an event): the servers of each partition in index order on one thread, the partitions on the threads
    /// that run them when the simulation runs in parallel. What a server does then must touch only its own node
    /// (its services, links and timers, which belong to its partition) or be thread-safe; each partition numbers the
    /// events it schedules in its own order, so the run is the same as calling it for every server in turn. Starting
    /// a job on every server of 8x8x8 at R = 512 builds 1.57 M vertices: 4.1 s on one thread.
    /// </summary>
    public void ForEachServer(Action<int> perServer)
    {
        ArgumentNullException.ThrowIfNull(perServer);
        EnsureRunnable();
        if (_inParallelRun)
        {
            throw new InvalidOperationException("call ForEachServer from the thread that drives the simulation, not from inside an event");
        }
        if (!RunsInParallel)
        {
            for (int i = 0; i < _hosts.Length; i++)
            {
                perServer(i);
            }
            return;
        }
        Workers.ForEachPartition(p =>
        {
            var partition = _partitions[p];
            for (int i = 0; i < _hosts.Length; i++)
            {
                if (ReferenceEquals(_partitionOf[i], partition))
                {
                    perServer(i);
                }
            }
        });
    }

    /// <summary>The threads that run the partitions, started on first use.</summary>
    private PartitionWorkers Workers => _workers ??= new PartitionWorkers(_partitions, InboundPartitions(), Lookahead, Threads);

    /// <summary>Processes one event; false when none is pending.</summary>
    public bool Step()
    {
        EnsureRunnable();
        long started = Stopwatch.GetTimestamp();
        bool any = ProcessNext(long.MaxValue, out _);
        _wallTicks += Stopwatch.GetTimestamp() - started;
        return any;
    }

    /// <summary>Processes every event due at or before <paramref name="time"/>, then sets the clock to it.</summary>
    public void RunUntil(long time)
    {
        EnsureRunnable();
        long started = Stopwatch.GetTimestamp();
        try
        {
            if (RunsInParallel)
            {
                RunInParallel(null, time);
            }
            else
            {
                while (ProcessNext(time, out _))
                {
                }
            }
            AdvanceClock(time);
        }
        finally
        {
            _wallTicks += Stopwatch.GetTimestamp() - started;
        }
    }

    public void RunFor(long duration) => RunUntil(_now + duration);

    /// <summary>Processes up to <paramref name="count"/> events (fewer when the queue runs dry); returns how many.</summary>
    public long RunEvents(long count)
    {
        EnsureRunnable();
        long started = Stopwatch.GetTimestamp();
        long done = 0;
        while (done < count && ProcessNext(long.MaxValue, out _))
        {
            done++;
        }
        _wallTicks += Stopwatch.GetTimestamp() - started;
        return done;
    }

    /// <summary>
    /// Runs until <paramref name="predicate"/> holds or virtual time reaches <paramref name="timeLimit"/>. The
    /// predicate is checked before starting, after every timer and scheduled action, and every
    /// <paramref name="checkEvery"/> frame events (so the run may overshoot by fewer than that many events;
    /// pass 1 for an exact stop). Running in parallel, it is checked after every scheduled action and every parallel run
    /// instead. Returns whether the predicate holds.
    /// </summary>
    public bool RunUntil(Func<bool> predicate, long timeLimit, int checkEvery = 256)
    {
        ArgumentNullException.ThrowIfNull(predicate);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(checkEvery);
        EnsureRunnable();
        if (predicate())
        {
            return true;
        }
        long started = Stopwatch.GetTimestamp();
        try
        {
            if (RunsInParallel)
            {
                if (RunInParallel(predicate, timeLimit))
                {
                    return true;
                }
            }
            else
            {
                int sinceCheck = 0;
                while (ProcessNext(timeLimit, out var kind))
                {
                    if ((++sinceCheck >= checkEvery || kind <= EventKind.Timer) && predicate())
                    {
                        return true;
                    }
                    if (sinceCheck >= checkEvery)
                    {
                        sinceCheck = 0;
                    }
                }
            }
            AdvanceClock(timeLimit);
            return predicate();
        }
        finally
        {
            _wallTicks += Stopwatch.GetTimestamp() - started;
        }
    }

    private void EnsureRunnable()
    {
        ObjectDisposedException.ThrowIf(_disposed, this);
        if (!_started)
        {
            throw new InvalidOperationException("start the simulation first");
        }
    }

    private void AdvanceClock(long time)
    {
        if (time > _now && time != long.MaxValue)
        {
            _now = time;
            foreach (var p in _partitions)
            {
                p.AdvanceTo(time);
            }
        }
    }

    /// <summary>
    /// Processes the next event in the one global order, on this thread: a scheduled action if one is due no later
    /// than every partition's next event, else the partition event with the smallest (time, order).
    /// </summary>
    private bool ProcessNext(long limit, out EventKind kind)
    {
        long actionTime = _actionQueue.NextTime;
        SimulationPartition best = _partitions[0];
        if (_partitions.Length == 1)
        {
            // One partition (the common sequential case): pop straight away, only events due before the next
            // action, rather than peeking first. No outbox: every link is inside the partition.
            if (best.ProcessNext(Math.Min(limit, actionTime - 1), out kind))
            {
                _now = best.Now;
                return true;
            }
            if (actionTime <= limit && RunNextAction())
            {
                kind = EventKind.Action;
                return true;
            }
            kind = default;
            return false;
        }
        best.TryPeek(out long bestTime, out ulong bestOrder);
        for (int p = 1; p < _partitions.Length; p++)
        {
            if (_partitions[p].TryPeek(out long time, out ulong order) && (time < bestTime || (time == bestTime && order < bestOrder)))
            {
                best = _partitions[p];
                bestTime = time;
                bestOrder = order;
            }
        }
        if (actionTime <= bestTime)
        {
            kind = EventKind.Action;
            return actionTime <= limit && RunNextAction();
        }
        if (bestTime > limit || !best.ProcessNext(bestTime, out kind))
        {
            kind = default;
            return false;
        }
        _now = bestTime;
        if (best.HasOutbound)
        {
            best.DeliverOutbound();
        }
        return true;
    }

    /// <summary>
    /// Between parallel runs: a partition's frames end up in the pool of the partition that received them, so where traffic
    /// converges (the reducers) pools fill while the senders' pools run dry and allocate. Surpluses go to a spare pool
    /// that tops every partition up to its share again: on 8x8x8, 53,800 frames (485 MB) were allocated without it at
    /// R = 1 and 98,000 at R = 512 when pools were refilled only once nearly empty; now 17,600 and 33,000.
    /// </summary>
    private void BalanceFramePools()
    {
        foreach (var p in _partitions)
        {
            var frames = p.Frames;
            int free = frames.FreeCount;
            if (free > _framesKeptFree * 2)
            {
                frames.MoveFreeTo(_spareFrames, free - _framesKeptFree);
            }
            else if (free < _framesKeptFree && _spareFrames.FreeCount > 0)
            {
                _spareFrames.MoveFreeTo(frames, _framesKeptFree - free);
            }
        }
    }

    /// <summary>Runs the earliest scheduled action with every partition's clock at its time.</summary>
    private bool RunNextAction()
    {
        if (!_actionQueue.TryPop(long.MaxValue, out long time, out var ev))
        {
            return false;
        }
        AdvanceClock(time);
        _actionsRun++;
        Trace?.Record(time, EventKind.Action, -1, NoPort, 0);
        _actions.Take(ev.Target)();
        return true;
    }

    /// <summary>
    /// Conservative parallel run: the partitions run on their threads from the earliest pending event to a common
    /// bound (<see cref="ParallelRunLookaheads"/> link delays later, or the next scheduled action), each as far ahead
    /// as its neighbours allow (<see cref="PartitionWorkers"/>); then frames still waiting in inboxes are queued, the
    /// frame pools are evened out, actions run and the predicate is checked. Returns true when
    /// <paramref name="predicate"/> holds.
    /// </summary>
    private bool RunInParallel(Func<bool>? predicate, long timeLimit)
    {
        var workers = Workers;
        long span = Lookahead * ParallelRunLookaheads;
        while (true)
        {
            long actionTime = _actionQueue.NextTime;
            long next = long.MaxValue;
            foreach (var p in _partitions)
            {
                next = Math.Min(next, p.NextTime);
            }
            long start = Math.Min(next, actionTime);
            if (start == long.MaxValue || start > timeLimit)
            {
                return false;
            }
            if (actionTime == start)
            {
                RunNextAction();
                if (predicate is not null && predicate())
                {
                    return true;
                }
                continue;
            }
            long bound = start > long.MaxValue - span ? long.MaxValue : start + span;
            bound = Math.Min(bound, actionTime);
            if (timeLimit < long.MaxValue)
            {
                bound = Math.Min(bound, timeLimit + 1);
            }
            _inParallelRun = true;
            try
            {
                workers.Run(start, bound);
            }
            finally
            {
                _inParallelRun = false;
            }
            foreach (var p in _partitions)
            {
                p.TakeInbox();
                _now = Math.Max(_now, p.Now);
            }
            BalanceFramePools();
            if (predicate is not null && predicate())
            {
                return true;
            }
        }
    }

    /// <summary>Per partition, the other partitions with a link into it.</summary>
    private int[][] InboundPartitions()
    {
        var inbound = new HashSet<int>[_partitions.Length];
        for (int p = 0; p < inbound.Length; p++)
        {
            inbound[p] = [];
        }
        foreach (var link in _links)
        {
            if (!ReferenceEquals(link.Sender, link.Receiver))
            {
                inbound[link.Receiver.Index].Add(link.Sender.Index);
            }
        }
        return inbound.Select(set => set.Order().ToArray()).ToArray();
    }
}
