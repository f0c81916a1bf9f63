using Camdoop.FrontEnd.Wire;
using Camdoop.Runtime.Logging;

namespace Camdoop.FrontEnd.Jobs;

// Killing: an operator cancels a running job. The coordinator ends it everywhere with an End that also discards
// output; every server drops its part at once (vertices, streams, buffers, map outputs, partial reduce outputs), and
// the jobs still running there go on and take over its share of the buffer budget.
public sealed partial class JobControlService
{
    /// <summary>
    /// Kills a job coordinated here (event loop). Throws <see cref="FrontEndException"/> when the job is unknown here or
    /// has already finished (done, failed or killed: nothing is left to cancel).
    /// </summary>
    public JobTracker Kill(ulong jobId)
    {
        var job = GetJob(jobId)
            ?? throw new FrontEndException($"unknown job {jobId:x16} (jobs are known to the front-end they were submitted to)");
        if (job.IsOver || job.Finishing)
        {
            string state = job.Finishing && !job.IsOver ? "done" : job.State.ToString().ToLowerInvariant();
            throw new FrontEndException($"job {jobId:x16} has already finished ({state}): nothing to kill");
        }
        job.State = JobState.Killed;
        job.Failure = "killed by an operator";
        job.FinishedAt = Context.Now;
        Context.Log(LogLevel.Warning, $"job {jobId:x16} killed by an operator while {(job.ShuffleStartedAt > 0 ? "shuffling" : "mapping")}");
        EndEverywhere(job, discardOutput: true);
        return job;
    }

    /// <summary>
    /// A killed job with an output dataset may have stored some reduce outputs as chunks: once every server has dropped
    /// the job, they are deleted from every replica (the manifest was never written, so no one can read them anyway).
    /// </summary>
    private void DeleteKilledOutput(JobTracker job)
    {
        if (job.OutputDataset is not { } name || job.OutputDeleted)
        {
            return;
        }
        job.OutputDeleted = true;
        Store.DeleteDataset(name, result =>
        {
            if (result.Deleted > 0)
            {
                Context.Log(LogLevel.Info, $"job {job.Description.JobId:x16}: deleted {result.Deleted} replicas of its partial output '{name}'");
            }
        });
    }
}
