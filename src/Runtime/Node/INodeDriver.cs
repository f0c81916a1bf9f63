using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

/// <summary>
/// The environment a <see cref="NodeHost"/> runs in: the simulator's global event queue, or a real server's event
/// loop. It owns the clock and the timer queue.
/// </summary>
public interface INodeDriver
{
    long Now { get; }

    /// <summary>
    /// The clock as <paramref name="host"/>'s services see it: <see cref="Now"/>, or later in a simulator where the
    /// work they declared (<see cref="Compute"/>) has moved the server's own time on.
    /// </summary>
    long NowOf(NodeHost host) => Now;

    /// <summary>
    /// Wall-clock time in milliseconds since the Unix epoch, for timestamps people read (when a dataset was created),
    /// never for timing. The simulator derives it from virtual time.
    /// </summary>
    long UnixTimeMilliseconds => DateTimeOffset.UnixEpoch.ToUnixTimeMilliseconds() + (Now / 1_000_000);

    /// <summary>
    /// Nanoseconds on a clock every server of the cube reads alike (see <see cref="INodeContext.ClusterTime"/>):
    /// virtual time in the simulator.
    /// </summary>
    long ClusterTime => Now;

    /// <summary>Arranges for <see cref="NodeHost.FireTimer"/> to be called with <paramref name="timerId"/> at <paramref name="dueTime"/>.</summary>
    void ScheduleTimer(NodeHost host, long dueTime, long timerId);

    void Log(Coordinate node, LogLevel level, string message);

    /// <summary>
    /// Runs <paramref name="work"/> off the event loop, then <paramref name="then"/> on it (see
    /// <see cref="INodeContext.RunOffLoop"/>). A driver without worker threads runs both inline.
    /// </summary>
    void RunOffLoop(NodeHost host, Action work, Action then)
    {
        work();
        then();
    }

    /// <summary>
    /// Prices work a service on <paramref name="host"/> declared (see <see cref="INodeContext.Compute"/>). A real
    /// event loop does nothing: the work already took its CPU time.
    /// </summary>
    void Compute(NodeHost host, ComputeWork kind, long bytes)
    {
    }
}
