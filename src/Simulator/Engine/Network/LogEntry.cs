using System.Globalization;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Network;

/// <summary>One line a node logged, stamped with virtual time.</summary>
public sealed record LogEntry(long Time, Coordinate Node, LogLevel Level, string Message)
{
    public override string ToString() =>
        string.Create(CultureInfo.InvariantCulture, $"[{SimTime.Format(Time)}] {Node} {Level}: {Message}");
}
