using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Service;

namespace Camdoop.Experiments;

/// <summary>How several jobs that run at once share the cube's servers (the Camdoop paper, §5.3).</summary>
public enum JobPartitioning
{
    /// <summary>Every server maps every job; the jobs' reduce tasks are spread so that no server roots more than its share.</summary>
    Horizontal,

    /// <summary>Each job maps and reduces on its own servers only; every server still forwards and aggregates for all.</summary>
    Vertical,
}

/// <summary>
/// Where each of several jobs that run at once maps and roots its reduce tasks, the same on every run of the same
/// jobs: horizontal partitioning takes the jobs' roots in turn from one farthest-point order over the cube, so each
/// server roots at most one more reduce task than any other (two R = 1 jobs are rooted apart, two R = N jobs root one
/// task of each on every server); vertical partitioning gives each job its own servers, picked from the seed as the
/// paper picks "thirteen servers each" at random, or listed, and spreads its roots over them.
/// </summary>
public static class ConcurrentPlacement
{
    /// <summary>
    /// <paramref name="count"/> copies of <paramref name="job"/>, each with its own data: copy k has job id and seed
    /// those of <paramref name="job"/> plus k (copy 0 is the job itself), placed by <paramref name="partitioning"/>.
    /// </summary>
    public static IReadOnlyList<JobSimulationOptions> Copies(JobSimulationOptions job, int count, JobPartitioning partitioning, int serversPerJob = 0)
    {
        ArgumentNullException.ThrowIfNull(job);
        ArgumentOutOfRangeException.ThrowIfLessThan(count, 1);
        var copies = Enumerable.Range(0, count)
            .Select(k => job with { JobId = job.JobId + (ulong)k, Settings = job.Settings with { Seed = job.Settings.Seed + (ulong)k } })
            .ToList();
        return partitioning == JobPartitioning.Horizontal ? Horizontal(copies) : Vertical(copies, serversPerJob);
    }

    /// <summary>
    /// The jobs on every server, their roots taken in turn from the farthest-point order of the cube that starts
    /// where the first job's default placement does: the first job keeps its own roots, and the next ones continue
    /// the order where the previous job's stopped, wrapping around.
    /// </summary>
    public static IReadOnlyList<JobSimulationOptions> Horizontal(IReadOnlyList<JobSimulationOptions> jobs)
    {
        var torus = Check(jobs);
        int n = torus.Count;
        int start = JobPlacement.SpreadStart(torus, jobs[0].JobId);
        var order = JobPlacement.Spread(torus, [.. Enumerable.Range(0, n).Select(k => (start + k) % n)], n);
        var placed = new List<JobSimulationOptions> { jobs[0] with { MapServers = null } };
        int next = jobs[0].ReduceTasks;
        foreach (var job in jobs.Skip(1))
        {
            int first = next;
            placed.Add(job with { MapServers = null, Roots = [.. Enumerable.Range(0, job.ReduceTasks).Select(r => order[(first + r) % n])] });
            next += job.ReduceTasks;
        }
        return placed;
    }

    /// <summary>
    /// Each job on <paramref name="serversPerJob"/> servers of its own (0: an equal share, N / K), chosen at random
    /// from the first job's seed; servers left over take no job's map or reduce tasks.
    /// </summary>
    public static IReadOnlyList<JobSimulationOptions> Vertical(IReadOnlyList<JobSimulationOptions> jobs, int serversPerJob = 0)
    {
        var torus = Check(jobs);
        int n = torus.Count;
        int each = serversPerJob > 0 ? serversPerJob : n / jobs.Count;
        if (each < 1 || (long)each * jobs.Count > n)
        {
            throw new ArgumentException($"{jobs.Count} jobs of {each} servers each do not fit the {n} servers of {torus}");
        }
        // Fisher-Yates over the server indices, from the seed: the same jobs get the same servers on every run.
        var random = new DeterministicRandom(jobs[0].Settings.Seed, stream: 0x9A27);
        var servers = Enumerable.Range(0, n).ToArray();
        for (int i = n - 1; i > 0; i--)
        {
            int j = random.Next(i + 1);
            (servers[i], servers[j]) = (servers[j], servers[i]);
        }
        return Vertical(jobs, [.. Enumerable.Range(0, jobs.Count).Select(k => (IReadOnlyList<int>)servers[(k * each)..((k + 1) * each)])]);
    }

    /// <summary>
    /// Job k on the servers of <paramref name="servers"/>[k] (indices in torus order, disjoint): its input split over
    /// them, its roots spread over them in farthest-point order from the first listed.
    /// </summary>
    public static IReadOnlyList<JobSimulationOptions> Vertical(IReadOnlyList<JobSimulationOptions> jobs, IReadOnlyList<IReadOnlyList<int>> servers)
    {
        var torus = Check(jobs);
        ArgumentNullException.ThrowIfNull(servers);
        if (servers.Count != jobs.Count)
        {
            throw new ArgumentException($"{servers.Count} server lists for {jobs.Count} jobs");
        }
        var taken = new HashSet<int>();
        var placed = new List<JobSimulationOptions>(jobs.Count);
        for (int k = 0; k < jobs.Count; k++)
        {
            var own = servers[k];
            if (own.Count == 0 || own.Any(s => (uint)s >= (uint)torus.Count || !taken.Add(s)))
            {
                throw new ArgumentException($"job {k}'s servers must be servers of {torus}, at least one, and no other job's");
            }
            if (jobs[k].ReduceTasks > own.Count)
            {
                throw new ArgumentException($"job {k} has R = {jobs[k].ReduceTasks} reduce tasks for its {own.Count} servers (at most one per server)");
            }
            placed.Add(jobs[k] with { MapServers = [.. own.Order()], Roots = JobPlacement.Spread(torus, own, jobs[k].ReduceTasks) });
        }
        return placed;
    }

    private static Camdoop.Runtime.Topology.Torus Check(IReadOnlyList<JobSimulationOptions> jobs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        if (jobs.Count == 0)
        {
            throw new ArgumentException("no jobs to place");
        }
        var torus = jobs[0].Torus;
        if (jobs.Any(j => !j.Torus.Equals(torus)))
        {
            throw new ArgumentException("jobs that run at once run on the same cube");
        }
        return torus;
    }
}
