using Camdoop.Monitoring.Tables;

namespace Camdoop.FrontEnd.Web;

/// <summary>One MapReduce job on the page: its state, progress, times and output over the whole cube.</summary>
public sealed record JobProgress
{
    public required string Job { get; init; }

    public required string Name { get; init; }

    /// <summary>
    /// running while any server runs it, failed when any failed, stopped when any server stopped it before it
    /// finished (killed), else done: as `camdoop jobs` names them.
    /// </summary>
    public required string State { get; init; }

    /// <summary>Finished tree vertices over all vertices, 0 to 1 (the shuffle's progress).</summary>
    public double Progress { get; init; }

    public long Vertices { get; init; }

    public long VerticesDone { get; init; }

    public long ReduceTasks { get; init; }

    public long ReduceTasksDone { get; init; }

    public long BytesIn { get; init; }

    public long BytesOut { get; init; }

    /// <summary>Where the output went: the output directory under each root's data directory, or "discarded".</summary>
    public string Output { get; init; } = "";

    /// <summary>Bytes of output files the reduce tasks' roots wrote.</summary>
    public long OutputBytes { get; init; }

    /// <summary>When the shuffle started on its first server, Unix milliseconds; 0 when unknown.</summary>
    public long StartedUnixMs { get; init; }

    /// <summary>When it ended on its last server, Unix milliseconds; 0 while it runs.</summary>
    public long EndedUnixMs { get; init; }

    /// <summary>
    /// One entry per job from <see cref="CubeState.JobsQuery"/>'s rows (job, name, state, reduce_tasks, vertices,
    /// vertices_done, reduce_tasks_done, bytes_in, bytes_out, output, output_bytes, started_ms, ended_ms), which hold
    /// one row per job and state: the servers where a job runs and those where it has finished give two. Running jobs
    /// first, then the most recently ended, then by id.
    /// </summary>
    public static IReadOnlyList<JobProgress> Merge(IEnumerable<QueryValue[]> rows)
    {
        ArgumentNullException.ThrowIfNull(rows);
        return [.. rows
            .GroupBy(r => r[0].ToString(), StringComparer.Ordinal)
            .Select(g =>
            {
                var states = g.Select(r => r[2].ToString()).ToHashSet(StringComparer.Ordinal);
                long vertices = g.Sum(r => (long)r[4].Number);
                long done = g.Sum(r => (long)r[5].Number);
                string state = states.Contains("running") ? "running"
                    : states.Contains("failed") ? "failed"
                    : states.Contains("stopped") ? "stopped"
                    : "done";
                var started = g.Select(r => Number(r, 11)).Where(t => t > 0).DefaultIfEmpty(0).Min();
                return new JobProgress
                {
                    Job = g.Key,
                    Name = g.First()[1].ToString(),
                    State = state,
                    Progress = vertices == 0 ? 0 : (double)done / vertices,
                    Vertices = vertices,
                    VerticesDone = done,
                    ReduceTasks = g.Max(r => (long)r[3].Number),
                    ReduceTasksDone = g.Sum(r => (long)r[6].Number),
                    BytesIn = g.Sum(r => (long)r[7].Number),
                    BytesOut = g.Sum(r => (long)r[8].Number),
                    Output = g.First().Length > 9 ? g.First()[9].ToString() : "",
                    OutputBytes = g.Sum(r => Number(r, 10)),
                    StartedUnixMs = started,
                    EndedUnixMs = state == "running" ? 0 : g.Max(r => Number(r, 12)),
                };
            })
            .OrderBy(j => j.State == "running" ? 0 : 1)
            .ThenByDescending(j => j.EndedUnixMs)
            .ThenBy(j => j.Job, StringComparer.Ordinal)];
    }

    private static long Number(QueryValue[] row, int column) => row.Length > column ? (long)row[column].Number : 0;
}
