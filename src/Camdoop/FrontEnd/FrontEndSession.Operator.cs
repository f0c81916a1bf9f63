using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Wire;
using Camdoop.JobControl;
using Camdoop.JobControl.Wire;

namespace Camdoop.FrontEnd;

// Operator requests: list the jobs coordinated here, kill one, delete a dataset, rate limits (FrontEndSession.Limits.cs),
// the web view's logins (FrontEndSession.Web.cs), fsck (FrontEndSession.Fsck.cs) and decommissioning
// (FrontEndSession.Decommission.cs).
public sealed partial class FrontEndSession
{
    private Task HandleOperatorAsync(FrontEndRequest request, FrontEndReplies replies, CancellationToken cancellation) => request switch
    {
        JobsRequest => JobsAsync(replies, cancellation),
        KillRequest kill => KillAsync(kill, replies, cancellation),
        RmRequest rm => RmAsync(rm, replies, cancellation),
        LimitRequest limit => LimitAsync(limit, replies, cancellation),
        LimitsRequest => LimitsAsync(replies, cancellation),
        FsckRequest fsck => FsckAsync(fsck, replies, cancellation),
        DecommissionRequest decommission => DecommissionAsync(decommission, replies, cancellation),
        _ => HandleWebAsync(request, replies, cancellation),
    };

    private async Task JobsAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var jobs = _node.Jobs ?? throw new FrontEndException("this server runs no Camdoop service");
        var listing = await _node.Start<JobListing>(jobs.ListJobs).ConfigureAwait(false);
        var reply = new JobsReply { Jobs = [.. listing.Jobs.Select(Summary)], Unanswered = [.. listing.Unanswered.Select(c => c.Name)] };
        await replies.SendAsync(reply, cancellation).ConfigureAwait(false);
    }

    private async Task KillAsync(KillRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        var jobs = _node.Jobs ?? throw new FrontEndException("this server runs no Camdoop service");
        ulong jobId = ParseJobId(Field.Required(request.JobId, "jobId"));
        var (job, error) = await _node.Start<(JobSnapshot?, string?)>(done => jobs.KillAnywhere(jobId, (s, e) => done((s, e)))).ConfigureAwait(false);
        if (job is null)
        {
            throw new FrontEndException(error ?? $"unknown job {FormatJobId(jobId)}");
        }
        var reply = new KillReply
        {
            JobId = FormatJobId(jobId),
            Was = job.ShuffleReduceSeconds > 0 ? "shuffling" : "mapping",
            Servers = job.Servers,
        };
        await replies.SendAsync(reply, cancellation).ConfigureAwait(false);
    }

    private async Task RmAsync(RmRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string name = Names.CheckDataset(Field.Required(request.Name, "name"));
        _ = await ReadManifestAsync(name).ConfigureAwait(false) ?? throw new FrontEndException($"unknown dataset '{name}'");
        // A job reading the dataset would fail mid-way: every coordinator is asked.
        string? user = null;
        if (_node.Jobs is { } jobs)
        {
            var listing = await _node.Start<JobListing>(jobs.ListJobs).ConfigureAwait(false);
            user = listing.Jobs.FirstOrDefault(j => !j.State.IsOver() && !j.Finishing && j.Input == name) is { } j ? FormatJobId(j.JobId) : null;
        }
        if (user is not null)
        {
            throw new FrontEndException($"dataset '{name}' is the input of running job {user}; kill it or wait for it first");
        }
        var result = await _node.Start<DeleteResult>(done => _node.Store.DeleteDataset(name, done)).ConfigureAwait(false);
        await replies.SendAsync(
            new RmReply
            {
                Name = name,
                Replicas = result.Deleted,
                Bytes = result.Bytes,
                Unanswered = result.Unanswered.Select(c => c.Name).ToList(),
            },
            cancellation).ConfigureAwait(false);
    }

    /// <summary>A job as `camdoop jobs` shows it.</summary>
    private static JobSummary Summary(JobSnapshot job) => new()
    {
        JobId = FormatJobId(job.JobId),
        Job = job.Job,
        Input = job.Input,
        Reducers = job.Reducers,
        Mode = job.Mode,
        State = job.State.Name(),
        Servers = job.Servers,
        MapsDone = job.MapsDone,
        ShuffleBytes = job.ShuffleBytes,
        ReducesDone = job.ReducesDone,
        SubmittedUnixMs = job.SubmittedUnixMs,
        JobSeconds = job.JobSeconds,
        ShuffleReduceSeconds = job.ShuffleReduceSeconds,
        Failure = job.Failure,
        Coordinator = job.Coordinator.Name,
    };
}
