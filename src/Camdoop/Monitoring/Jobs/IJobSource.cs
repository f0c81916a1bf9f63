namespace Camdoop.Monitoring.Jobs;

/// <summary>
/// Whether a job on a server is still running there, finished, failed, or stopped: ended here before it finished
/// (killed, or given up when its coordinator ended it).
/// </summary>
public enum JobState
{
    Running,
    Finished,
    Failed,
    Stopped,
}

/// <summary>
/// One MapReduce job on one server: a row of <see cref="Tables.MonitorTables.Jobs"/> without the server, each field the
/// column of the same name (the table describes them).
/// </summary>
public readonly record struct JobStats(
    ulong JobId,
    string Name,
    JobState State,
    int ReduceTasks,
    int Vertices,
    int VerticesDone,
    int ReduceTasksDone,
    long BytesIn,
    long BytesOut,
    long AggregatedBytes,
    long Limit,
    long FrameBytesSent,
    string Output = "",
    long OutputBytes = 0,
    long StartedUnixMs = 0,
    long EndedUnixMs = 0);

/// <summary>
/// The MapReduce jobs on one server, as monitoring reads and limits them: the monitoring service is given one when
/// it is built, so it knows nothing of the service that runs the jobs. A server without one has no jobs to show.
/// </summary>
public interface IJobSource
{
    /// <summary>
    /// Every job the server holds now (running, finished or failed) and, after them, the last jobs it held that have
    /// ended here, newest last (a bounded history), read once per query round.
    /// </summary>
    IReadOnlyList<JobStats> Snapshot();

    /// <summary>
    /// Caps job <paramref name="jobId"/>'s data frames at <paramref name="bytesPerSecond"/> on each port of
    /// <paramref name="portMask"/> (bit n: port n); 0 lifts the limit. A job not here yet gets it when it starts.
    /// </summary>
    void SetLimit(ulong jobId, long bytesPerSecond, int portMask);
}
