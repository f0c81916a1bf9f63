using Camdoop.ChunkStore;
using Camdoop.FrontEnd.Wire;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.FrontEnd.Jobs;

// Coordinator: the front-end's side of a job. Broadcasts it, waits for every map phase, starts the shuffle, tracks
// progress and the reduce tasks, writes the output manifest, ends the job.
public sealed partial class JobControlService
{
    private readonly Dictionary<ulong, JobTracker> _jobs = [];

    /// <summary>A shuffle stream names the map task it carries in one byte (0 is the vertex itself).</summary>
    private const int MaxMapTasksPerServer = 255;

    /// <summary>A job coordinated here, or null.</summary>
    public JobTracker? GetJob(ulong jobId) => _jobs.GetValueOrDefault(jobId);

    public IReadOnlyCollection<JobTracker> CoordinatedJobs => _jobs.Values;

    /// <summary>
    /// Starts a job over <paramref name="input"/> (event loop): each chunk is mapped at its primary replica in this
    /// server's view. With <paramref name="outputDataset"/> the reduce outputs go to the chunk store as that dataset.
    /// Throws <see cref="FrontEndException"/> when the job cannot be started (a server unreachable, too many chunks).
    /// </summary>
    public JobTracker Submit(JobDescription description, DatasetManifest input, string? outputDataset = null)
    {
        ArgumentNullException.ThrowIfNull(description);
        ArgumentNullException.ThrowIfNull(input);
        var context = Context;
        var torus = context.Torus;
        description.Validate(torus.Count);
        if (_jobs.ContainsKey(description.JobId))
        {
            throw new FrontEndException($"job {description.JobId:x16} already exists");
        }
        // Servers down now take no part: their chunks are mapped at the next replica, their vertices run where
        // their keys remap (the Camdoop service's view starts without them).
        var participants = torus.All().Where(c => _routing!.IsReachable(c)).ToList();
        var assignment = participants.ToDictionary(c => c, _ => new List<Key>());
        foreach (var chunk in input.Chunks)
        {
            var replicas = Store.PlacementOf(chunk.Id).Where(assignment.ContainsKey).ToList();
            if (replicas.Count == 0)
            {
                throw new FrontEndException($"no replica server of input chunk {chunk.Id} is reachable");
            }
            assignment[replicas[0]].Add(chunk.Id);
        }
        if (assignment.Values.Max(c => c.Count) > MaxMapTasksPerServer)
        {
            throw new FrontEndException($"dataset '{input.Name}' puts more than {MaxMapTasksPerServer} chunks on one server; store it with a larger chunk size");
        }
        var encoded = JobDescriptionCodec.Encode(description);
        // Every server gets the whole directory of map tasks (which chunks each server maps), so that whoever a failed
        // server's map task remaps to knows to run it again.
        var w = JobControlWire.Begin(_frame, JobMessage.Start, description.JobId);
        w.Bytes(encoded);
        w.String(outputDataset);
        int size = JobControlWire.HeaderSize + 2 + encoded.Length + 2 + 1024 + 2 + (assignment.Count * 4) + (input.Chunks.Count * Key.Size);
        if (size > JobControlWire.MaxPayload)
        {
            throw new FrontEndException($"dataset '{input.Name}' has {input.Chunks.Count} chunks, too many for one job-start frame; store it with a larger chunk size");
        }
        w.U16(assignment.Count);
        foreach (var (server, chunks) in assignment.OrderBy(a => torus.IndexOf(a.Key)))
        {
            w.U16(torus.IndexOf(server));
            w.U16(chunks.Count);
            foreach (var id in chunks.Order())
            {
                w.Key(id);
            }
        }
        byte[] payload = _frame.AsSpan(0, w.Length).ToArray();
        var tracker = new JobTracker(description, input, outputDataset, torus.Count, participants, context.Now);
        _jobs[description.JobId] = tracker;
        tracker.MapTasksAssigned = input.Chunks.Count;
        foreach (var server in participants)
        {
            var s = server;
            SendReliable(server, JobMessage.Start, description.JobId, 0, payload, () => FailJob(tracker, $"server {s.Name} never acknowledged the job"));
        }
        context.Log(LogLevel.Info, $"job {description.JobId:x16}: {description.Job} on '{input.Name}' ({input.Chunks.Count} chunks), R={description.ReduceTasks}, {description.Mode}, output {(outputDataset is null ? "local files" : $"dataset '{outputDataset}'")}");
        ArmStallCheck(tracker);
        return tracker;
    }

    private bool OnMapDone(Coordinate from, ulong jobId, ReadOnlySpan<byte> payload)
    {
        var r = JobControlWire.Body(payload);
        bool ok = r.U8() == 1;
        var report = new MapReport(ok, r.U16(), r.I64(), r.I64(), r.I64(), r.I64(), null);
        string error = r.String();
        if (!r.Ok || !r.AtEnd)
        {
            return false;
        }
        SendAck(from, JobMessage.MapDone, jobId, 0);
        if (!_jobs.TryGetValue(jobId, out var job) || job.IsOver)
        {
            return true;
        }
        job.Touch(Context.Now);
        if (!job.RecordMap(from, report with { Error = ok ? null : error }))
        {
            return true;
        }
        if (!ok)
        {
            FailJob(job, $"map phase failed on {from.Name}: {error}");
            return true;
        }
        StartShuffleWhenMapped(job);
        return true;
    }

    /// <summary>Every server still in the job has mapped: start the shuffle everywhere at once.</summary>
    private void StartShuffleWhenMapped(JobTracker job)
    {
        if (job.State != JobState.Mapping || !job.EveryServerMapped)
        {
            return;
        }
        ulong jobId = job.Description.JobId;
        job.MapsDoneAt = job.ShuffleStartedAt = Context.Now;
        job.State = JobState.Shuffling;
        foreach (var c in job.Participants)
        {
            var w = JobControlWire.Begin(_frame, JobMessage.Shuffle, jobId);
            var s = c;
            SendReliable(c, JobMessage.Shuffle, jobId, 0, _frame.AsSpan(0, w.Length).ToArray(),
                () => FailJob(job, $"server {s.Name} never acknowledged the shuffle start"));
        }
    }

    private bool OnProgress(Coordinate from, ulong jobId, ReadOnlySpan<byte> payload)
    {
        var r = JobControlWire.Body(payload);
        var totals = WorkerTotals.Read(ref r);
        if (!r.Ok || !r.AtEnd)
        {
            return false;
        }
        if (_jobs.TryGetValue(jobId, out var job) && !job.IsOver)
        {
            job.Touch(Context.Now);
            job.Record(Context.Torus.IndexOf(from), totals);
        }
        return true;
    }

    private bool OnReduceDone(Coordinate from, ulong jobId, ReadOnlySpan<byte> payload)
    {
        var r = JobControlWire.Body(payload);
        int reduceTask = (int)r.U32();
        long records = r.I64(), logical = r.I64(), fileBytes = r.I64();
        ulong checksum = r.U64();
        string path = r.String();
        bool stored = r.U8() == 1;
        Key chunk = stored ? r.Key() : default;
        long chunkLength = stored ? r.I64() : 0;
        ulong chunkChecksum = stored ? r.U64() : 0;
        if (!r.Ok || !r.AtEnd)
        {
            return false;
        }
        SendAck(from, JobMessage.ReduceDone, jobId, reduceTask);
        if (!_jobs.TryGetValue(jobId, out var job) || job.IsOver || job.Finishing || reduceTask >= job.Description.ReduceTasks || job.Reduces[reduceTask] is not null
            || !job.Participants.Contains(from))
        {
            return true;
        }
        job.Touch(Context.Now);
        job.Reduces[reduceTask] = (from, new ReduceReport(reduceTask, records, logical, fileBytes, checksum, path.Length > 0 ? path : null, stored ? chunk : null, chunkLength, chunkChecksum));
        job.ReducesDone++;
        if (job.ReducesDone == job.Description.ReduceTasks)
        {
            if (job.OutputDataset is null)
            {
                Complete(job);
            }
            else
            {
                StoreOutputManifest(job);
            }
        }
        return true;
    }

    private bool OnFailed(Coordinate from, ulong jobId, ReadOnlySpan<byte> payload)
    {
        var r = JobControlWire.Body(payload);
        string reason = r.String();
        if (!r.Ok || !r.AtEnd)
        {
            return false;
        }
        SendAck(from, JobMessage.Failed, jobId, 0);
        if (_jobs.TryGetValue(jobId, out var job) && !job.IsOver)
        {
            FailJob(job, $"failed on {from.Name}: {reason}");
        }
        return true;
    }

    private void StoreOutputManifest(JobTracker job)
    {
        var chunks = job.Reduces.Select(x => new ManifestChunk(x!.Value.Report.Chunk!.Value, x.Value.Report.ChunkLength, x.Value.Report.ChunkChecksum)).ToList();
        var manifest = new DatasetManifest
        {
            Name = job.OutputDataset!,
            TotalBytes = chunks.Sum(c => c.Length),
            CreatedUnixMs = Context.UnixTimeMilliseconds,
            Chunks = chunks,
        };
        var (meta, bytes) = manifest.ToChunk();
        Store.Write(meta, bytes, result =>
        {
            if (result.Ok)
            {
                Complete(job);
            }
            else
            {
                FailJob(job, $"storing the output manifest failed: {result.Error}");
            }
        });
    }

    /// <summary>Every reduce task is stored: the job's time ends here; it is done once every server has cleaned up.</summary>
    private void Complete(JobTracker job)
    {
        if (job.IsOver || job.Finishing)
        {
            return;
        }
        job.Finishing = true;
        job.FinishedAt = Context.Now;
        Context.Log(LogLevel.Info, $"job {job.Description.JobId:x16} done in {(job.FinishedAt - job.SubmittedAt) / 1e9:0.000} s (shuffle and reduce {(job.FinishedAt - job.ShuffleStartedAt) / 1e9:0.000} s)");
        EndEverywhere(job);
    }

    private void FailJob(JobTracker job, string reason)
    {
        if (job.IsOver || job.Finishing)
        {
            return;
        }
        job.State = JobState.Failed;
        job.Failure = reason;
        job.FinishedAt = Context.Now;
        Context.Log(LogLevel.Warning, $"job {job.Description.JobId:x16} failed: {reason}");
        EndEverywhere(job);
    }

    private void OnEndAcknowledged(Coordinate server, ulong jobId, WorkerTotals? totals)
    {
        if (!_jobs.TryGetValue(jobId, out var job))
        {
            return;
        }
        if (totals is { } t)
        {
            job.Record(Context.Torus.IndexOf(server), t);
        }
        job.EndAcknowledgedBy.Add(server);
        CompleteWhenEndedEverywhere(job);
    }

    /// <summary>Every server still in the job has dropped it: a finishing job is done.</summary>
    private void CompleteWhenEndedEverywhere(JobTracker job)
    {
        if (!job.EndedEverywhere)
        {
            return;
        }
        if (job.Finishing && job.State != JobState.Done)
        {
            job.State = JobState.Done;
        }
        if (job.State == JobState.Killed)
        {
            DeleteKilledOutput(job);
        }
    }

    private void EndEverywhere(JobTracker job, bool discardOutput = false)
    {
        ulong jobId = job.Description.JobId;
        foreach (var c in job.Participants)
        {
            // Whatever was still being retried for this job is moot now.
            CancelPending(c, jobId, JobMessage.Start, JobMessage.Shuffle);
            var s = c;
            SendEnd(c, jobId, () => OnEndAcknowledged(s, jobId, null), discardOutput);
        }
    }

    /// <summary>
    /// Tells <paramref name="server"/> the job is over for it (reliably). With <paramref name="discardOutput"/> (the job
    /// was killed) it also deletes the partial reduce outputs on its disk.
    /// </summary>
    private void SendEnd(Coordinate server, ulong jobId, Action? onGiveUp = null, bool discardOutput = false)
    {
        var w = JobControlWire.Begin(_frame, JobMessage.End, jobId);
        if (discardOutput)
        {
            w.U8(JobControlWire.EndDiscardOutput);
        }
        SendReliable(server, JobMessage.End, jobId, 0, _frame.AsSpan(0, w.Length).ToArray(), onGiveUp);
    }

    private void ArmStallCheck(JobTracker job)
    {
        Context.SetTimer(Options.StallTimeout / 4, () =>
        {
            if (job.IsOver || job.Finishing || _stopped)
            {
                return;
            }
            if (Context.Now - job.LastHeard > Options.StallTimeout)
            {
                FailJob(job, $"no server reported progress for {Options.StallTimeout / 1e9:0} s");
                return;
            }
            ArmStallCheck(job);
        });
    }
}

public enum JobState
{
    Mapping,
    Shuffling,
    Done,
    Failed,

    /// <summary>Cancelled by an operator (`camdoop kill`) while it ran.</summary>
    Killed,
}

/// <summary>The coordinator's view of one job. Mutated on the event loop; snapshots are taken there too.</summary>
public sealed class JobTracker
{
    private readonly HashSet<Coordinate> _mapped = [];

    internal JobTracker(JobDescription description, DatasetManifest input, string? outputDataset, int torusServers, IEnumerable<Coordinate> participants, long now)
    {
        Description = description;
        Input = input;
        OutputDataset = outputDataset;
        Participants = [.. participants];
        Servers = Participants.Count;
        SubmittedAt = LastHeard = now;
        Reduces = new (Coordinate, ReduceReport)?[description.ReduceTasks];
        int torus = torusServers;
        ShuffleBytesByServer = new long[torus];
        ResentBytesByServer = new long[torus];
        MapTasksRerunByServer = new int[torus];
        VerticesAdoptedByServer = new int[torus];
    }

    public JobDescription Description { get; }

    public DatasetManifest Input { get; }

    public string? OutputDataset { get; }

    /// <summary>Servers that took part in the job when it started.</summary>
    public int Servers { get; }

    /// <summary>Servers still in the job: those it started on, less every one lost since.</summary>
    public HashSet<Coordinate> Participants { get; }

    /// <summary>Servers lost while the job ran, in the order their loss was seen here.</summary>
    public List<ServerLoss> Losses { get; } = [];

    internal HashSet<Coordinate> EndAcknowledgedBy { get; } = [];

    public JobState State { get; internal set; } = JobState.Mapping;

    public bool IsOver => State is JobState.Done or JobState.Failed or JobState.Killed;

    /// <summary>Every server still in the job has acknowledged its end (for a killed job: dropped its part).</summary>
    public bool EndedEverywhere => (Finishing || IsOver) && Participants.All(EndAcknowledgedBy.Contains);

    /// <summary>Every reduce task is done; waiting for the servers to acknowledge the end (and report final counts).</summary>
    public bool Finishing { get; internal set; }

    public string? Failure { get; internal set; }

    /// <summary>The partial output dataset of a killed job has been deleted (or is being).</summary>
    internal bool OutputDeleted { get; set; }

    public int MapTasksAssigned { get; internal set; }

    public int MapsDone => _mapped.Count;

    /// <summary>Every server still in the job has reported its map phase.</summary>
    public bool EveryServerMapped => Participants.All(_mapped.Contains);

    public long InputBytes { get; private set; }

    public long InputRecords { get; private set; }

    /// <summary>Key plus value bytes after the map-side combine: what the shuffle would carry without aggregation.</summary>
    public long IntermediateBytes { get; private set; }

    public long[] ShuffleBytesByServer { get; }

    public long ShuffleBytes => ShuffleBytesByServer.Sum();

    internal long[] ResentBytesByServer { get; }

    internal int[] MapTasksRerunByServer { get; }

    internal int[] VerticesAdoptedByServer { get; }

    /// <summary>Bytes sent again to recover from failures, over every server.</summary>
    public long ResentBytes => ResentBytesByServer.Sum();

    public int MapTasksRerun => MapTasksRerunByServer.Sum();

    public int VerticesAdopted => VerticesAdoptedByServer.Sum();

    public (Coordinate Server, ReduceReport Report)?[] Reduces { get; }

    public int ReducesDone { get; internal set; }

    /// <summary>Times on the coordinator's clock (ns).</summary>
    public long SubmittedAt { get; }

    public long MapsDoneAt { get; internal set; }

    public long ShuffleStartedAt { get; internal set; }

    public long FinishedAt { get; internal set; }

    public long LastHeard { get; private set; }

    internal void Touch(long now) => LastHeard = now;

    /// <summary>A server's counts so far (progress reports and end acknowledgements may arrive in any order).</summary>
    internal void Record(int server, WorkerTotals totals)
    {
        ShuffleBytesByServer[server] = Math.Max(ShuffleBytesByServer[server], totals.Delivered);
        ResentBytesByServer[server] = Math.Max(ResentBytesByServer[server], totals.Resent);
        MapTasksRerunByServer[server] = Math.Max(MapTasksRerunByServer[server], totals.MapTasksRerun);
        VerticesAdoptedByServer[server] = Math.Max(VerticesAdoptedByServer[server], totals.VerticesAdopted);
    }

    internal bool RecordMap(Coordinate server, MapReport report)
    {
        if (!_mapped.Add(server))
        {
            return false;
        }
        InputBytes += report.InputBytes;
        InputRecords += report.InputRecords;
        IntermediateBytes += report.IntermediateBytes;
        return true;
    }
}

/// <summary>A server the coordinator saw become unreachable during a job: when (its clock, ns) and in which phase
/// ("mapping", "shuffling", or "finishing" once every reduce task had written its output).</summary>
public sealed record ServerLoss(Coordinate Server, long DetectedAt, string During);
