using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Node.Fakes;

/// <summary>A hand-cranked clock and timer list for driving one <see cref="NodeHost"/> in a unit test.</summary>
internal sealed class ManualDriver : INodeDriver
{
    private readonly List<(long Due, long Sequence, NodeHost Host, long Id)> _timers = [];
    private long _sequence;

    public long Now { get; private set; }

    public List<(Coordinate Node, LogLevel Level, string Message)> Logs { get; } = [];

    public int PendingTimers => _timers.Count;

    /// <summary>Timer ids handed to the driver, in scheduling order.</summary>
    public List<long> ScheduledIds { get; } = [];

    public void ScheduleTimer(NodeHost host, long dueTime, long timerId)
    {
        Assert.True(dueTime >= Now, "a timer was scheduled in the past");
        _timers.Add((dueTime, _sequence++, host, timerId));
        ScheduledIds.Add(timerId);
    }

    public void Log(Coordinate node, LogLevel level, string message) => Logs.Add((node, level, message));

    /// <summary>Fires every timer due up to <paramref name="time"/>, in (due, scheduling) order, then sets the clock.</summary>
    public void AdvanceTo(long time)
    {
        while (FireNext(time))
        {
        }
        Now = time;
    }

    /// <summary>Fires the earliest timer due at or before <paramref name="time"/>; false when there is none.</summary>
    public bool FireNext(long time)
    {
        {
            int next = -1;
            for (int i = 0; i < _timers.Count; i++)
            {
                var t = _timers[i];
                if (t.Due <= time && (next < 0 || t.Due < _timers[next].Due || (t.Due == _timers[next].Due && t.Sequence < _timers[next].Sequence)))
                {
                    next = i;
                }
            }
            if (next < 0)
            {
                return false;
            }
            var timer = _timers[next];
            _timers.RemoveAt(next);
            Now = timer.Due;
            timer.Host.FireTimer(timer.Id);
            return true;
        }
    }

    public void AdvanceBy(long delta) => AdvanceTo(Now + delta);

    /// <summary>Fires the timers due now (e.g. a zero-delay local delivery).</summary>
    public void RunDue() => AdvanceTo(Now);
}
