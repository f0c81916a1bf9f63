using System.Globalization;
using System.Security.Cryptography;
using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Jobs;
using Camdoop.FrontEnd.Wire;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Trees;

namespace Camdoop.FrontEnd;

// Jobs: submission, status and progress, and the output of a finished job.
public sealed partial class FrontEndSession
{
    private Task HandleJobsAsync(FrontEndRequest request, FrontEndReplies replies, CancellationToken cancellation) => request switch
    {
        SubmitRequest submit => SubmitAsync(submit, replies, cancellation),
        JobStatusRequest status => JobStatusAsync(status, replies, cancellation),
        JobPartRequest part => JobPartAsync(part, replies, cancellation),
        _ => HandleOperatorAsync(request, replies, cancellation),
    };

    private async Task SubmitAsync(SubmitRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        var jobs = _node.Jobs ?? throw new FrontEndException("this server runs no Camdoop service");
        string jobText = Names.CheckJob(Field.Required(request.Job, "job"));
        JobSpec spec;
        IMapReduceJob job;
        try
        {
            spec = JobSpec.Parse(jobText);
            job = jobs.Options.Jobs.Create(spec);
        }
        catch (JobLoadException e)
        {
            throw new FrontEndException(e.Message, e);
        }
        int servers = _node.Loop.Host.Torus.Count;
        long reducers = Field.Required(request.Reducers, "reducers");
        if (reducers < 1 || reducers > servers)
        {
            throw new FrontEndException($"R = {reducers} reduce tasks: the cube has {servers} servers and runs 1 to {servers} reduce tasks (at most one per server)");
        }
        string modeName = Field.Required(request.Mode, "mode");
        if (!ShuffleModes.TryParse(modeName, out var mode))
        {
            throw new FrontEndException($"unknown mode '{modeName}' ({ShuffleModes.NameList})");
        }
        if (mode == ShuffleMode.Tcp && _node.Jobs?.Direct is null)
        {
            throw new FrontEndException("mode tcp needs the servers on a switch network with TCP streams, and this cube's servers have none");
        }
        if (!TreeFamilyNames.TryParse(request.Trees ?? TreeFamily.Shallow.Name(), out var trees))
        {
            throw new FrontEndException($"unknown tree family '{request.Trees}' (shallow or paper)");
        }
        string input = Names.CheckDataset(Field.Required(request.Input, "input"), "input dataset name");
        string? output = request.Output;
        if (output is not null)
        {
            Names.CheckDataset(output, "output dataset name");
            if (await ReadManifestAsync(output).ConfigureAwait(false) is not null)
            {
                throw new FrontEndException($"the output dataset '{output}' already exists");
            }
        }
        var manifest = await ReadManifestAsync(input).ConfigureAwait(false)
            ?? throw new FrontEndException($"unknown dataset '{input}'");
        if (DatasetFit.WhyNot(job, manifest) is { } misfit)
        {
            throw new FrontEndException(misfit);
        }
        ulong jobId = BitConverter.ToUInt64(RandomNumberGenerator.GetBytes(8));
        var description = new JobDescription
        {
            JobId = jobId,
            Job = spec,
            ReduceTasks = (int)reducers,
            Mode = mode,
            Trees = trees,
            ReplicateOutput = request.ReplicateOutput,
            Input = new InputDescription(FormattableString.Invariant($"chunks/{input}")),
            Output = OutputTarget.LocalFiles(),
        };
        await _node.OnLoop(() => jobs.Submit(description, manifest, output)).ConfigureAwait(false);
        await replies.SendAsync(new SubmitReply { JobId = FormatJobId(jobId) }, cancellation).ConfigureAwait(false);
    }

    private async Task JobStatusAsync(JobStatusRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        var jobs = _node.Jobs ?? throw new FrontEndException("this server runs no Camdoop service");
        ulong jobId = ParseJobId(Field.Required(request.JobId, "jobId"));
        var status = await _node.OnLoop(() => jobs.GetJob(jobId) is { } t ? Snapshot(t, _node.Loop.Host.Now, _node.Loop.Host.UnixTimeMilliseconds) : null).ConfigureAwait(false)
            ?? throw new FrontEndException($"unknown job {FormatJobId(jobId)} (jobs are known to the front-end they were submitted to)");
        await replies.SendAsync(status, cancellation).ConfigureAwait(false);
    }

    /// <summary>Streams the output of one reduce task: from the chunk store, or from the reducer's disk.</summary>
    private async Task JobPartAsync(JobPartRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        var jobs = _node.Jobs ?? throw new FrontEndException("this server runs no Camdoop service");
        ulong jobId = ParseJobId(Field.Required(request.JobId, "jobId"));
        int reduceTask = (int)Field.Required(request.ReduceTask, "reduceTask");
        var part = await _node.OnLoop(() =>
        {
            var job = jobs.GetJob(jobId) ?? throw new FrontEndException($"unknown job {FormatJobId(jobId)}");
            if (job.State != JobState.Done)
            {
                throw new FrontEndException($"job {FormatJobId(jobId)} is {job.State.ToString().ToLowerInvariant()}, not done");
            }
            if (reduceTask < 0 || reduceTask >= job.Reduces.Length)
            {
                throw new FrontEndException($"job {FormatJobId(jobId)} has no reduce task {reduceTask}");
            }
            return job.Reduces[reduceTask]!.Value;
        }).ConfigureAwait(false);
        var report = part.Report;
        ReadResult result;
        if (report.Chunk is { } chunk)
        {
            result = await _node.Start<ReadResult>(done => _node.Store.Read(chunk, done)).ConfigureAwait(false);
        }
        else if (report.OutputPath is { } path)
        {
            result = await _node.Start<ReadResult>(done => _node.Store.ReadFile(part.Server, path, done)).ConfigureAwait(false);
        }
        else
        {
            throw new FrontEndException($"reduce task {reduceTask} of job {FormatJobId(jobId)} kept no output (discarded)");
        }
        if (!result.Ok)
        {
            throw new FrontEndException($"the output of reduce task {reduceTask} could not be read: {result.Error}");
        }
        var bytes = result.Bytes!;
        await SendDataPartsAsync(bytes, replies, cancellation).ConfigureAwait(false);
        await replies.SendAsync(new JobPartReply { Length = bytes.Length, Server = part.Server.Name }, cancellation).ConfigureAwait(false);
    }

    /// <summary>The job as the client sees it (taken on the event loop).</summary>
    private static JobStatusReply Snapshot(JobTracker job, long now, long unixMs)
    {
        var d = job.Description;
        long end = job.IsOver || job.Finishing ? job.FinishedAt : now;
        return new JobStatusReply
        {
            JobId = FormatJobId(d.JobId),
            Job = d.Job.ToString(),
            Input = job.Input.Name,
            Reducers = d.ReduceTasks,
            Mode = d.Mode.Name(),
            Trees = d.Trees.Name(),
            State = job.State.ToString().ToLowerInvariant(),
            Servers = job.Servers,
            MapsDone = job.MapsDone,
            MapTasks = job.MapTasksAssigned,
            InputBytes = job.InputBytes,
            IntermediateBytes = job.IntermediateBytes,
            ShuffleBytes = job.ShuffleBytes,
            ReducesDone = job.ReducesDone,
            JobSeconds = (end - job.SubmittedAt) / 1e9,
            MapSeconds = ((job.MapsDoneAt > 0 ? job.MapsDoneAt : end) - job.SubmittedAt) / 1e9,
            ShuffleReduceSeconds = job.ShuffleStartedAt > 0 ? (end - job.ShuffleStartedAt) / 1e9 : 0.0,
            Failure = job.Failure,
            OutputDataset = job.OutputDataset,
            Outputs = job.Reduces
                .Where(r => r is not null)
                .Select(r => new JobOutputInfo
                {
                    ReduceTask = r!.Value.Report.ReduceTask,
                    Server = r.Value.Server.Name,
                    Path = r.Value.Report.OutputPath,
                    Chunk = r.Value.Report.Chunk?.ToString(),
                    Records = r.Value.Report.Records,
                    Bytes = r.Value.Report.FileBytes,
                })
                .ToList(),
            Failures = job.Losses
                .Select(l => new JobFailureInfo
                {
                    Server = l.Server.Name,
                    DetectedAtSeconds = (l.DetectedAt - job.SubmittedAt) / 1e9,
                    DetectedAtUnixMs = unixMs - ((now - l.DetectedAt) / 1_000_000),
                    During = l.During,
                })
                .ToList(),
            Recovery = new JobRecoveryInfo
            {
                ResentBytes = job.ResentBytes,
                MapTasksRerun = job.MapTasksRerun,
                VerticesAdopted = job.VerticesAdopted,
            },
        };
    }

    public static string FormatJobId(ulong jobId) => jobId.ToString("x16", CultureInfo.InvariantCulture);

    internal static ulong ParseJobId(string text) =>
        ulong.TryParse(text, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out ulong id) && text.Length <= 16
            ? id
            : throw new FrontEndException($"'{text}' is not a job id (16 hex digits)");
}
