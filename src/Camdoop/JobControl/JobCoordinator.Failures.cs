using Camdoop.JobControl.Wire;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

// Failures, as the coordinator sees them (the shuffle's own recovery is the Camdoop service's, §4.2). A lost server
// leaves the job for good: its map tasks run again where their ids remap, and its reduce tasks start over at their
// roots' new owners, unless their output outlived it (stored as a chunk, or not kept at all): the coordinator tells
// the servers which those are as they finish. An output file on the lost server's disk is lost with it: the record
// forgets it, and the task's restart brings it again; once the job is finishing, its outputs stay listed. A TCP Camdoop job has no such recovery: it starts over, as its
// next attempt, on the servers left. A lost server that comes back is told the job is over for it.
internal sealed partial class JobCoordinator
{
    public void OnOwnershipChanged(OwnershipChange change)
    {
        if (_stopped)
        {
            return;
        }
        if (change.BecameReachable.Count > 0)
        {
            FenceReturningServers(change.BecameReachable);
        }
        if (change.BecameUnreachable.Count > 0)
        {
            foreach (var job in _jobs.Values.Where(j => !j.IsOver).ToList())
            {
                LoseServers(job, [.. change.BecameUnreachable.Where(job.Participants.Contains)]);
                StartShuffleWhenMapped(job);
                CompleteWhenEndedEverywhere(job);
            }
        }
        RefreshKeepers();
    }

    /// <summary>
    /// A server lost to a job can come back (it was silent, not dead: a stalled process, a flapping link). The job went
    /// on without it and does not take it back, so it is told the job is over for it: it drops its part (vertices,
    /// streams, map outputs) instead of sending stale data on. An End, so that the job's usual clean-up runs.
    /// </summary>
    private void FenceReturningServers(IReadOnlyList<Coordinate> returned)
    {
        foreach (var job in _jobs.Values)
        {
            foreach (var server in returned.Where(s => !job.Participants.Contains(s) && job.Losses.Any(l => l.Server == s)))
            {
                _control.Log(LogLevel.Warning, $"job {job.JobId:x16}: lost server {server.Name} is reachable again; it leaves the job");
                SendEnd(server, job);
            }
        }
    }

    /// <summary>
    /// <paramref name="lost"/> left the job (<paramref name="alreadyOut"/>: they are no longer among its participants, a
    /// takeover found them gone). Records the losses and copies them, then lets the job recover.
    /// </summary>
    private void LoseServers(JobTracker job, IReadOnlyList<Coordinate> lost, bool alreadyOut = false)
    {
        if (lost.Count == 0)
        {
            return;
        }
        string during = job.Finishing ? "finishing" : job.State.Name();
        var servers = new List<Coordinate>();
        foreach (var server in lost)
        {
            if (!alreadyOut && !job.Participants.Remove(server))
            {
                continue;
            }
            var loss = new ServerLoss(server, _control.UnixMs, during);
            if (!job.Record.AddLoss(loss))
            {
                continue;
            }
            ReplicateUpdate(job, JobRecord.EncodeLoss(Hosts, job.Attempt, loss));
            _control.Log(LogLevel.Warning, $"job {job.JobId:x16}: server {server.Name} lost while {during}; the live servers take over its work");
            Channel.CancelAll(server, job.JobId, JobMessage.Start, JobMessage.Shuffle, JobMessage.End, JobMessage.ReducesDone);
            if (_control.IsServer(server))
            {
                servers.Add(server);
            }
        }
        if (job.Finishing || job.IsOver || servers.Count == 0)
        {
            return; // an appliance's loss is repaired by the servers of its trees
        }
        if (job.Description.Mode == ShuffleMode.Tcp && job.ReducesDone < job.Description.ReduceTasks)
        {
            // TCP Camdoop has no recovery, as in the Camdoop paper's baseline: the lost server's streams are gone.
            RestartAttempt(job, servers);
        }
    }

    /// <summary>
    /// Starts a TCP Camdoop job over on the servers left: every chunk is mapped again at its first live replica, the
    /// reduce tasks of lost roots move to the nearest live servers, and the attempt gets its own shuffle id so that no
    /// stream of the last one can mix in. The servers drop the last attempt when they hear of the next.
    /// </summary>
    private void RestartAttempt(JobTracker job, IReadOnlyList<Coordinate> lost)
    {
        var live = _control.ServerView(job.Participants);
        if (live.Count == 0)
        {
            FailJob(job, "every server of the job was lost");
            return;
        }
        SortedDictionary<int, IReadOnlyList<Key>> directory;
        try
        {
            var chunks = job.Record.Directory.Values.SelectMany(c => c).ToList();
            directory = Assign(job.InputName, chunks, live);
        }
        catch (JobControlException e)
        {
            FailJob(job, $"server{(lost.Count > 1 ? "s" : "")} {string.Join(" ", lost.Select(l => l.Name))} lost, and the job cannot start over: {e.Message}");
            return;
        }
        var old = job.Description;
        var roots = JobPlacement.For(_control.Servers, old).RootIndices.ToArray();
        for (int r = 0; r < roots.Length; r++)
        {
            if (!live.Contains(roots[r]))
            {
                roots[r] = NearestFreeServer(roots[r], live, roots);
            }
        }
        int attempt = job.Attempt + 1;
        foreach (int appliance in job.Record.Directory.Keys.Where(h => h >= _control.Servers.Count && job.Participants.Contains(Hosts.CoordinateOf(h))))
        {
            directory[appliance] = [];
        }
        Channel.CancelJob(job.JobId, JobMessage.Start, JobMessage.Shuffle, JobMessage.ReducesDone);
        job.Record.Attempt = attempt;
        job.Record.Description = old with { JobId = JobKeys.ShuffleId(job.JobId, attempt), Roots = roots };
        job.Record.Directory = directory;
        job.Record.Reduces = new (Coordinate, ReduceReport)?[old.ReduceTasks];
        job.State = JobState.Mapping;
        job.Restart(directory.Keys.Select(Hosts.CoordinateOf), Hosts, _control.Servers.Count);
        _control.Log(LogLevel.Warning, $"job {job.JobId:x16}: a tcp-mode job cannot go on without {string.Join(", ", lost.Select(l => l.Name))}; it starts over on the {job.Servers} servers left (attempt {attempt})");
        Replicate(job, () =>
        {
            if (!job.IsOver && job.Attempt == attempt)
            {
                SendStart(job);
            }
        });
    }

    /// <summary>
    /// The live server nearest <paramref name="root"/> (fewest hops, then lowest index) among those rooting the fewest
    /// reduce tasks: one rooting none while there is one.
    /// </summary>
    private int NearestFreeServer(int root, ServerSet live, int[] roots)
    {
        var torus = _control.Servers;
        var from = torus.CoordinateOf(root);
        return live.Members()
            .OrderBy(s => roots.Count(r => r == s)).ThenBy(s => torus.Distance(from, torus.CoordinateOf(s))).ThenBy(s => s)
            .First();
    }
}
