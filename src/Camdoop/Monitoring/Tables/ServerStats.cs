namespace Camdoop.Monitoring.Tables;

/// <summary>What a server's process costs: CPU time, working set and free disk.</summary>
public readonly record struct ServerStats(long CpuMilliseconds, long MemoryBytes, long DiskFreeBytes);

/// <summary>
/// Where the servers table gets the process's costs. A real node samples them off its event loop (they are system
/// calls) and hands over the latest sample; the simulator has none to give (one process hosts every server).
/// </summary>
public interface IServerStatsSource
{
    ServerStats Latest { get; }
}
