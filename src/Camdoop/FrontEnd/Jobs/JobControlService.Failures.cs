using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.FrontEnd.Jobs;

// Failures, as job control sees them (the shuffle's own recovery is the Camdoop service's). A coordinator stops
// waiting for servers it lost: their map tasks run again where their ids remap, their reduce tasks restart at their
// roots' new owners, and the job finishes on the live servers. A worker whose coordinator is lost drops the job:
// nobody is left to collect its result. A lost server that comes back is told to drop the job.
public sealed partial class JobControlService : IOwnershipListener
{
    public void OnOwnershipChanged(OwnershipChange change)
    {
        ArgumentNullException.ThrowIfNull(change);
        if (_stopped)
        {
            return;
        }
        if (change.BecameReachable.Count > 0)
        {
            FenceReturningServers(change.BecameReachable);
        }
        if (change.BecameUnreachable.Count == 0)
        {
            return;
        }
        foreach (var job in _jobs.Values.Where(j => !j.IsOver))
        {
            foreach (var server in change.BecameUnreachable)
            {
                LoseServer(job, server);
            }
            StartShuffleWhenMapped(job);
            CompleteWhenEndedEverywhere(job);
        }
        foreach (var work in _work.Values.Where(w => change.BecameUnreachable.Contains(w.Coordinator)).ToList())
        {
            Context.Log(LogLevel.Warning, $"job {work.Description.JobId:x16}: its coordinator {work.Coordinator.Name} is lost; dropping the job here");
            DropWork(work);
        }
        // A server whose part of a job had finished may have taken over a lost server's work: report it too.
        ArmProgressReports();
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
            ulong jobId = job.Description.JobId;
            foreach (var server in returned.Where(s => !job.Participants.Contains(s) && job.Losses.Any(l => l.Server == s)))
            {
                Context.Log(LogLevel.Warning, $"job {jobId:x16}: lost server {server.Name} is reachable again; it leaves the job");
                SendEnd(server, jobId);
            }
        }
    }

    private void LoseServer(JobTracker job, Coordinate server)
    {
        if (!job.Participants.Remove(server))
        {
            return;
        }
        ulong jobId = job.Description.JobId;
        string during = job.Finishing ? "finishing" : job.State.ToString().ToLowerInvariant();
        job.Losses.Add(new ServerLoss(server, Context.Now, during));
        Context.Log(LogLevel.Warning, $"job {jobId:x16}: server {server.Name} lost while {during}; the live servers take over its work");
        CancelPending(server, jobId, JobMessage.Start, JobMessage.Shuffle, JobMessage.End);
        if (job.Finishing)
        {
            return;
        }
        if (job.Description.Mode == ShuffleMode.Tcp)
        {
            // TCP Camdoop has no recovery, as in the Camdoop paper's baseline: the lost server's streams are gone.
            FailJob(job, $"server {server.Name} was lost, and a tcp-mode job cannot recover from it");
            return;
        }
        // An output file on the lost server's disk is lost with it: take the result of the reduce task's restart instead.
        // (An output stored in the chunk store has replicas and stays.)
        for (int r = 0; r < job.Reduces.Length; r++)
        {
            if (job.Reduces[r] is { } done && done.Server == server && done.Report.Chunk is null)
            {
                job.Reduces[r] = null;
                job.ReducesDone--;
            }
        }
    }
}
