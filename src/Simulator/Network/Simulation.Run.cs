using System.Diagnostics;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Engine;

namespace Camdoop.Simulator.Network;

// The event loop: pop the earliest event, advance virtual time, dispatch by kind (no virtual calls, no allocation).
public sealed partial class Simulation
{
    private const int NoPort = 0xFF;

    private readonly EventQueue _queue = new(4096);
    private readonly ActionTable _actions = new();
    private readonly long[] _eventsByKind = new long[4];
    private long _now;
    private long _staleEvents;
    private long _wallTicks;

    /// <summary>Events processed so far, all kinds.</summary>
    public long EventsProcessed => _eventsByKind[0] + _eventsByKind[1] + _eventsByKind[2] + _eventsByKind[3];

    /// <summary>Transmit-complete and frame-arrival events processed.</summary>
    public long FrameEventsProcessed => _eventsByKind[(int)EventKind.TransmitComplete] + _eventsByKind[(int)EventKind.FrameArrival];

    public long EventsOf(EventKind kind) => _eventsByKind[(int)kind];

    /// <summary>Events that were void when they fell due (a failed link's or a crashed server's frames).</summary>
    public long StaleEvents => _staleEvents;

    /// <summary>Events waiting in the queue.</summary>
    public int PendingEvents => _queue.Count;

    /// <summary>Time of the next event, or <see cref="long.MaxValue"/> when none is pending.</summary>
    public long NextEventTime => _queue.NextTime;

    /// <summary>Wall-clock time spent inside the run methods.</summary>
    public TimeSpan WallTime => Stopwatch.GetElapsedTime(0, _wallTicks);

    /// <summary>Events processed per wall-clock second so far.</summary>
    public double EventsPerSecond => _wallTicks == 0 ? 0 : EventsProcessed / WallTime.TotalSeconds;

    /// <summary>Runs <paramref name="action"/> at virtual time <paramref name="at"/> (after anything already scheduled for that time).</summary>
    public void Schedule(long at, Action action)
    {
        ArgumentNullException.ThrowIfNull(action);
        if (at < _now)
        {
            throw new ArgumentOutOfRangeException(nameof(at), at, $"time {at} is in the past (now {_now})");
        }
        _queue.Push(at, SimEvent.ForAction(_actions.Add(action)));
    }

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
        while (ProcessNext(time, out _))
        {
        }
        if (time > _now)
        {
            _now = time;
        }
        _wallTicks += Stopwatch.GetTimestamp() - started;
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
    /// pass 1 for an exact stop). Returns whether the predicate holds.
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
            if (timeLimit > _now)
            {
                _now = timeLimit;
            }
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

    private bool ProcessNext(long limit, out EventKind kind)
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
                OnTransmitComplete(_links[ev.Target], ev.Epoch);
                break;
            case EventKind.FrameArrival:
                OnArrival(_links[ev.Target], ev.Epoch);
                break;
            case EventKind.Timer:
                OnTimer(ev.Target, ev.Epoch, ev.Arg);
                break;
            default:
                Trace?.Record(time, EventKind.Action, -1, NoPort, 0);
                _actions.Take(ev.Target)();
                break;
        }
        return true;
    }

    private void OnTransmitComplete(SimulatedLink link, int epoch)
    {
        if (epoch != link.Epoch)
        {
            _staleEvents++;
            Trace?.Record(_now, EventKind.TransmitComplete, link.FromIndex, (int)link.Port, -1);
            return;
        }
        Trace?.Record(_now, EventKind.TransmitComplete, link.FromIndex, (int)link.Port, link.HeadLength(wire: false));
        link.CompleteTransmit();
        int from = link.FromIndex;
        if (!_failed[from])
        {
            _hosts[from]!.OnTransmitReady(link.Port);
        }
    }

    private void OnArrival(SimulatedLink link, int epoch)
    {
        if (epoch != link.Epoch)
        {
            _staleEvents++;
            Trace?.Record(_now, EventKind.FrameArrival, link.ToIndex, (int)link.ToPort, -1);
            return;
        }
        Trace?.Record(_now, EventKind.FrameArrival, link.ToIndex, (int)link.ToPort, link.HeadLength(wire: true));
        int to = link.ToIndex;
        var frame = link.Arrive(_failed[to]);
        if (frame is not null)
        {
            _hosts[to]!.OnFrameReceived(link.ToPort, frame);
        }
    }

    private void OnTimer(int node, int boot, long timerId)
    {
        Trace?.Record(_now, EventKind.Timer, node, NoPort, 0);
        if (_boots[node] == boot && !_failed[node])
        {
            _hosts[node]!.FireTimer(timerId);
        }
    }
}
