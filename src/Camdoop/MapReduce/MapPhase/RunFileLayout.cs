using System.Globalization;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>
/// Where a map task's output lives: one directory per (job, map task) holding ONE indexed run file with a segment
/// per (reduce task, stripe) (like Hadoop's spill file + index), so R = N = 512 costs one file per map task, not 3,072.
/// </summary>
public static class RunFileLayout
{
    public const string RunFileName = "map.runs";

    /// <summary>jobs/&lt;job id&gt; under the data directory: the job's map outputs and, by default, its reduce outputs.</summary>
    public static string JobDirectory(string dataDirectory, ulong jobId) =>
        Path.Combine(dataDirectory, "jobs", jobId.ToString("x16", CultureInfo.InvariantCulture));

    public static string MapTaskDirectory(string dataDirectory, ulong jobId, ulong mapTaskId) =>
        Path.Combine(JobDirectory(dataDirectory, jobId), "map-" + mapTaskId.ToString("x16", CultureInfo.InvariantCulture));

    /// <summary>The indexed run file of the map task whose output directory is <paramref name="mapTaskDirectory"/>.</summary>
    public static string RunFilePath(string mapTaskDirectory) => Path.Combine(mapTaskDirectory, RunFileName);
}
