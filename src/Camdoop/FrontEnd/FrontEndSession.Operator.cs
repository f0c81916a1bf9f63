using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Jobs;
using Camdoop.FrontEnd.Wire;
using Camdoop.MapReduce.Jobs.Control;

namespace Camdoop.FrontEnd;

// Operator requests: list the jobs coordinated here, kill one, delete a dataset, rate limits (FrontEndSession.Limits.cs).
public sealed partial class FrontEndSession
{
    private Task HandleOperatorAsync(FrontEndRequest request, FrontEndReplies replies, CancellationToken cancellation) => request switch
    {
        JobsRequest => JobsAsync(replies, cancellation),
        KillRequest kill => KillAsync(kill, replies, cancellation),
        RmRequest rm => RmAsync(rm, replies, cancellation),
        LimitRequest limit => LimitAsync(limit, replies, cancellation),
        LimitsRequest => LimitsAsync(replies, cancellation),
        _ => throw new FrontEndException($"unknown operation '{request.Op}'"),
    };

    private async Task JobsAsync(FrontEndReplies replies, CancellationToken cancellation)
    {
        var jobs = _node.Jobs ?? throw new FrontEndException("this server runs no Camdoop service");
        var list = await _node.OnLoop(() =>
        {
            long now = _node.Loop.Host.Now;
            long unixMs = _node.Loop.Host.UnixTimeMilliseconds;
            return jobs.CoordinatedJobs
                .OrderByDescending(j => j.SubmittedAt)
                .Select(j => Summary(j, now, unixMs))
                .ToList();
        }).ConfigureAwait(false);
        await replies.SendAsync(new JobsReply { Jobs = list }, cancellation).ConfigureAwait(false);
    }

    private async Task KillAsync(KillRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        var jobs = _node.Jobs ?? throw new FrontEndException("this server runs no Camdoop service");
        ulong jobId = ParseJobId(Field.Required(request.JobId, "jobId"));
        var reply = await _node.OnLoop(() =>
        {
            var job = jobs.Kill(jobId);
            return new KillReply
            {
                JobId = FormatJobId(jobId),
                Was = job.ShuffleStartedAt > 0 ? "shuffling" : "mapping",
                Servers = job.Participants.Count,
            };
        }).ConfigureAwait(false);
        await replies.SendAsync(reply, cancellation).ConfigureAwait(false);
    }

    private async Task RmAsync(RmRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        string name = Names.CheckDataset(Field.Required(request.Name, "name"));
        _ = await ReadManifestAsync(name).ConfigureAwait(false) ?? throw new FrontEndException($"unknown dataset '{name}'");
        // A job reading the dataset would fail mid-way; those this front-end coordinates are checked (others cannot be).
        string? user = _node.Jobs is { } jobs
            ? await _node.OnLoop(() => jobs.CoordinatedJobs.FirstOrDefault(j => !j.IsOver && !j.Finishing && j.Input.Name == name) is { } j
                ? FormatJobId(j.Description.JobId)
                : null).ConfigureAwait(false)
            : null;
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

    /// <summary>A job as `camdoop jobs` shows it (taken on the event loop).</summary>
    private static JobSummary Summary(JobTracker job, long now, long unixMs)
    {
        var d = job.Description;
        long end = job.IsOver || job.Finishing ? job.FinishedAt : now;
        return new JobSummary
        {
            JobId = FormatJobId(d.JobId),
            Job = d.Job.ToString(),
            Input = job.Input.Name,
            Reducers = d.ReduceTasks,
            Mode = d.Mode.Name(),
            State = job.State.ToString().ToLowerInvariant(),
            Servers = job.Servers,
            MapsDone = job.MapsDone,
            ShuffleBytes = job.ShuffleBytes,
            ReducesDone = job.ReducesDone,
            SubmittedUnixMs = unixMs - ((now - job.SubmittedAt) / 1_000_000),
            JobSeconds = (end - job.SubmittedAt) / 1e9,
            ShuffleReduceSeconds = job.ShuffleStartedAt > 0 ? (end - job.ShuffleStartedAt) / 1e9 : 0.0,
            Failure = job.Failure,
        };
    }
}
