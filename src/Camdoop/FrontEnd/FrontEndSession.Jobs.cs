using System.Globalization;
using System.Security.Cryptography;
using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Wire;
using Camdoop.JobControl;
using Camdoop.JobControl.Wire;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Trees;

namespace Camdoop.FrontEnd;

// Jobs: submission, status and progress, and the output of a finished job. Any front-end answers for any job: job
// control asks the job's coordinator, wherever it is.
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
        if (mode != ShuffleMode.Tcp && (request.Push || request.ParallelFetches is not null))
        {
            throw new FrontEndException("push and parallel fetches are TCP Camdoop's (mode tcp)");
        }
        if (request.Push && request.ParallelFetches is not null)
        {
            throw new FrontEndException("a job that pushes admits no senders, so it takes no parallel fetches");
        }
        if (request.ParallelFetches is { } fetches && (fetches < 1 || fetches > ushort.MaxValue))
        {
            throw new FrontEndException($"{fetches} parallel fetches is out of range (1 .. {ushort.MaxValue})");
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
        // The job's control key is this server's, so this front-end's server coordinates it; the job is accepted
        // (and its id given out) once the two servers after it hold its state too.
        var accepted = await _node.Start<JobTracker>(done =>
        {
            ulong jobId = jobs.NewJobId(() => BitConverter.ToUInt64(RandomNumberGenerator.GetBytes(8)));
            var description = new JobDescription
            {
                JobId = jobId,
                Job = spec,
                ReduceTasks = (int)reducers,
                Mode = mode,
                Trees = trees,
                ReplicateOutput = request.ReplicateOutput,
                ParallelFetches = (int)(request.ParallelFetches ?? 0),
                Push = request.Push,
                Input = new InputDescription(FormattableString.Invariant($"chunks/{input}")),
                Output = OutputTarget.LocalFiles(),
            };
            jobs.Submit(description, manifest, output, done);
        }).ConfigureAwait(false);
        await replies.SendAsync(new SubmitReply { JobId = FormatJobId(accepted.JobId) }, cancellation).ConfigureAwait(false);
    }

    private async Task JobStatusAsync(JobStatusRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        ulong jobId = ParseJobId(Field.Required(request.JobId, "jobId"));
        var snapshot = await StatusOfAsync(jobId).ConfigureAwait(false);
        await replies.SendAsync(Reply(snapshot), cancellation).ConfigureAwait(false);
    }

    /// <summary>Any job's snapshot, from its coordinator wherever it is; a one-line error when no server knows it.</summary>
    private async Task<JobSnapshot> StatusOfAsync(ulong jobId)
    {
        var jobs = _node.Jobs ?? throw new FrontEndException("this server runs no Camdoop service");
        var (snapshot, error) = await _node.Start<(JobSnapshot?, string?)>(done => jobs.Status(jobId, (s, e) => done((s, e)))).ConfigureAwait(false);
        return snapshot ?? throw new FrontEndException(error ?? $"unknown job {FormatJobId(jobId)}");
    }

    /// <summary>Streams the output of one reduce task: from the chunk store, or from the reducer's disk.</summary>
    private async Task JobPartAsync(JobPartRequest request, FrontEndReplies replies, CancellationToken cancellation)
    {
        ulong jobId = ParseJobId(Field.Required(request.JobId, "jobId"));
        int reduceTask = (int)Field.Required(request.ReduceTask, "reduceTask");
        var job = await StatusOfAsync(jobId).ConfigureAwait(false);
        if (job.State != JobState.Done)
        {
            throw new FrontEndException($"job {FormatJobId(jobId)} is {job.State.Name()}, not done");
        }
        if (reduceTask < 0 || reduceTask >= job.Reducers)
        {
            throw new FrontEndException($"job {FormatJobId(jobId)} has no reduce task {reduceTask}");
        }
        var part = job.Outputs.FirstOrDefault(o => o.ReduceTask == reduceTask)
            ?? throw new FrontEndException($"reduce task {reduceTask} of job {FormatJobId(jobId)} has no output recorded");
        Action<Action<ReadResult>, Func<ChunkMeta, bool>> read = part switch
        {
            { Chunk: { } chunk } => (done, admit) => _node.Store.Read(chunk, done, admit),
            { Path: { } path } => (done, admit) => _node.Store.ReadFile(part.Server, path, done, admit),
            _ => throw new FrontEndException($"reduce task {reduceTask} of job {FormatJobId(jobId)} kept no output (discarded)"),
        };
        var (result, held) = await ReadWithinBudgetAsync(read, cancellation).ConfigureAwait(false);
        try
        {
            if (!result.Ok)
            {
                throw new FrontEndException($"the output of reduce task {reduceTask} could not be read: {result.Error}");
            }
            var bytes = result.Bytes!;
            await SendDataPartsAsync(bytes, replies, cancellation).ConfigureAwait(false);
            await replies.SendAsync(new JobPartReply { Length = bytes.Length, Server = part.Server.Name }, cancellation).ConfigureAwait(false);
        }
        finally
        {
            _budget.Release(held);
        }
    }

    /// <summary>The job as the client sees it.</summary>
    private static JobStatusReply Reply(JobSnapshot job) => new()
    {
        JobId = FormatJobId(job.JobId),
        Job = job.Job,
        Input = job.Input,
        Reducers = job.Reducers,
        Mode = job.Mode,
        Trees = job.Trees,
        State = job.State.Name(),
        Servers = job.Servers,
        MapsDone = job.MapsDone,
        MapTasks = job.MapTasks,
        InputBytes = job.InputBytes,
        IntermediateBytes = job.IntermediateBytes,
        ShuffleBytes = job.ShuffleBytes,
        ReducesDone = job.ReducesDone,
        JobSeconds = job.JobSeconds,
        MapSeconds = job.MapSeconds,
        ShuffleReduceSeconds = job.ShuffleReduceSeconds,
        Failure = job.Failure,
        OutputDataset = job.OutputDataset,
        Outputs = [.. job.Outputs.Select(o => new JobOutputInfo
        {
            ReduceTask = o.ReduceTask,
            Server = o.Server.Name,
            Path = o.Path,
            Chunk = o.Chunk?.ToString(),
            Records = o.Records,
            Bytes = o.Bytes,
        })],
        Failures = [.. job.Losses.Select(l => new JobFailureInfo
        {
            Server = l.Server.Name,
            DetectedAtSeconds = (l.DetectedUnixMs - job.SubmittedUnixMs) / 1e3,
            DetectedAtUnixMs = l.DetectedUnixMs,
            During = l.During,
        })],
        Recovery = new JobRecoveryInfo
        {
            ResentBytes = job.ResentBytes,
            MapTasksRerun = job.MapTasksRerun,
            VerticesAdopted = job.VerticesAdopted,
        },
        Coordinator = job.Coordinator.Name,
        Attempt = job.Attempt,
    };

    public static string FormatJobId(ulong jobId) => jobId.ToString("x16", CultureInfo.InvariantCulture);

    internal static ulong ParseJobId(string text) =>
        ulong.TryParse(text, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out ulong id) && text.Length <= 16
            ? id
            : throw new FrontEndException($"'{text}' is not a job id (16 hex digits)");
}
