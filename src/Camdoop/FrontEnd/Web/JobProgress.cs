using Camdoop.Monitoring.Tables;

namespace Camdoop.FrontEnd.Web;

/// <summary>One MapReduce job on the page: its state and progress over the whole cube.</summary>
public sealed record JobProgress
{
    public required string Job { get; init; }

    public required string Name { get; init; }

    /// <summary>running while any server runs it, failed when any failed, else finished.</summary>
    public required string State { get; init; }

    /// <summary>Finished tree vertices over all vertices, 0 to 1 (the shuffle's progress).</summary>
    public double Progress { get; init; }

    public long Vertices { get; init; }

    public long VerticesDone { get; init; }

    public long ReduceTasks { get; init; }

    public long ReduceTasksDone { get; init; }

    public long BytesIn { get; init; }

    public long BytesOut { get; init; }

    /// <summary>
    /// One entry per job from <see cref="CubeState.JobsQuery"/>'s rows (job, name, state, reduce_tasks, vertices,
    /// vertices_done, reduce_tasks_done, bytes_in, bytes_out), which hold one row per job and state: the servers
    /// where a job runs and those where it has finished give two. Running jobs first, then by id.
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
                return new JobProgress
                {
                    Job = g.Key,
                    Name = g.First()[1].ToString(),
                    State = states.Contains("running") ? "running" : states.Contains("failed") ? "failed" : "finished",
                    Progress = vertices == 0 ? 0 : (double)done / vertices,
                    Vertices = vertices,
                    VerticesDone = done,
                    ReduceTasks = g.Max(r => (long)r[3].Number),
                    ReduceTasksDone = g.Sum(r => (long)r[6].Number),
                    BytesIn = g.Sum(r => (long)r[7].Number),
                    BytesOut = g.Sum(r => (long)r[8].Number),
                };
            })
            .OrderBy(j => j.State == "running" ? 0 : 1)
            .ThenBy(j => j.Job, StringComparer.Ordinal)];
    }
}
