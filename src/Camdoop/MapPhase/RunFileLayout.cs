using System.Globalization;

namespace Camdoop.MapReduce.MapPhase;

/// <summary>Where a map task's run files live: one directory per (job, map task), one file per (reduce task, stripe).</summary>
public static class RunFileLayout
{
    public static string MapTaskDirectory(string dataDirectory, ulong jobId, ulong mapTaskId) =>
        Path.Combine(dataDirectory, "jobs", jobId.ToString("x16", CultureInfo.InvariantCulture),
            "map-" + mapTaskId.ToString("x16", CultureInfo.InvariantCulture));

    public static string RunPath(string mapTaskDirectory, int reduceTask, int stripe) =>
        Path.Combine(mapTaskDirectory, string.Create(CultureInfo.InvariantCulture, $"r{reduceTask:D5}-s{stripe}.run"));
}
