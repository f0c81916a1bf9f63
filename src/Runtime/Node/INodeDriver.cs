using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

/// <summary>
/// The environment a <see cref="NodeHost"/> runs in: the simulator's global event queue, or a real server's event
/// loop. It owns the clock and the timer queue.
/// </summary>
public interface INodeDriver
{
    long Now { get; }

    /// <summary>Arranges for <see cref="NodeHost.FireTimer"/> to be called with <paramref name="timerId"/> at <paramref name="dueTime"/>.</summary>
    void ScheduleTimer(NodeHost host, long dueTime, long timerId);

    void Log(Coordinate node, LogLevel level, string message);
}
