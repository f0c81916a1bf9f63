using System.Diagnostics;
using Camdoop.Monitoring.Tables;

namespace Camdoop.Hosting;

/// <summary>
/// The server process's CPU time, working set and free disk for the servers table, sampled by the status timer
/// (off the event loop); the monitoring service reads the latest sample.
/// </summary>
internal sealed class ProcessStats(string dataDirectory) : IServerStatsSource
{
    private readonly Lock _gate = new();
    private ServerStats _latest;

    public ServerStats Latest
    {
        get
        {
            lock (_gate)
            {
                return _latest;
            }
        }
    }

    public void Sample()
    {
        using var process = Process.GetCurrentProcess();
        long free = 0;
        try
        {
            free = new DriveInfo(Path.GetFullPath(dataDirectory)).AvailableFreeSpace;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            // Unknown: the column reads 0.
        }
        var sample = new ServerStats((long)process.TotalProcessorTime.TotalMilliseconds, process.WorkingSet64, free);
        lock (_gate)
        {
            _latest = sample;
        }
    }
}
