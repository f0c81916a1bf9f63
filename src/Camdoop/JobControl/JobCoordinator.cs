using Camdoop.ChunkStore;
using Camdoop.JobControl.Channel;
using Camdoop.JobControl.Wire;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>
/// The coordinator of the jobs whose control key this server owns (the Camdoop paper, §4): it sends every server the
/// job and the chunks it maps, waits for every map phase, starts the shuffle everywhere at once (the paper's
/// synchronous start), tracks progress and the reduce tasks, writes the output manifest and ends the job. Its control
/// state is copied to the next two owners of the control key (<see cref="RecordKeeper"/>), one of which takes the job
/// over if this server dies.
/// </summary>
internal sealed partial class JobCoordinator
{
    /// <summary>A shuffle stream names the map task it carries in one byte (0 is the vertex itself).</summary>
    private const int MaxMapTasksPerServer = 255;

    private readonly ControlContext _control;
    private readonly Dictionary<ulong, JobTracker> _jobs = [];
    private readonly List<ulong> _ended = [];
    private uint _updateSequence;
    private bool _stopped;

    public JobCoordinator(ControlContext control)
    {
        _control = control;
    }

    /// <summary>Jobs coordinated here, those over included (up to <see cref="JobControlOptions.MaxEndedJobs"/>).</summary>
    public IReadOnlyCollection<JobTracker> Jobs => _jobs.Values;

    /// <summary>Jobs this server took over from a coordinator that died.</summary>
    public int Takeovers { get; private set; }

    public JobTracker? GetJob(ulong jobId) => _jobs.GetValueOrDefault(jobId);

    private ControlChannel Channel => _control.Channel;

    private Torus Hosts => _control.Hosts;

    public void Stop() => _stopped = true;

    /// <summary>
    /// Starts a job over <paramref name="input"/>: each chunk is mapped at its first reachable replica. Its control
    /// state goes to the two servers that would coordinate it after this one; once they hold it, every server is told
    /// to start and <paramref name="accepted"/> runs. Throws <see cref="JobControlException"/> when the job cannot start.
    /// </summary>
    public JobTracker Submit(JobDescription description, DatasetManifest input, string? outputDataset, Action<JobTracker>? accepted)
    {
        ArgumentNullException.ThrowIfNull(description);
        ArgumentNullException.ThrowIfNull(input);
        try
        {
            description.Validate(_control.Servers.Count);
        }
        catch (ArgumentException e)
        {
            throw new JobControlException(e.Message, e);
        }
        ulong jobId = description.JobId;
        if (_jobs.ContainsKey(jobId))
        {
            throw new JobControlException($"job {jobId:x16} already exists");
        }
        if (outputDataset is not null && _control.Store is null)
        {
            throw new JobControlException("an output dataset needs the chunk store, and this server runs none");
        }
        // Servers down now take no part: their chunks are mapped at the next replica, their vertices run where
        // their keys remap (the shuffle's view starts without them).
        var view = _control.ReachableServers();
        if (_control.CoordinatorOf(jobId, view) is not { } owner || owner != _control.Self)
        {
            throw new JobControlException($"job {jobId:x16} is coordinated by the owner of its control key, {_control.CoordinatorOf(jobId, view)?.Name ?? "nobody"}, not by {_control.Self.Name}");
        }
        var directory = Assign(input.Name, input.Chunks.Select(c => c.Id), view);
        var participants = directory.Keys.Select(Hosts.CoordinateOf).ToList();
        if (description.Mode == ShuffleMode.Tcp)
        {
            // Appliances (NetAgg's agg boxes) take part in the stream shuffle with no data of their own.
            foreach (int appliance in Appliances())
            {
                directory[appliance] = [];
                participants.Add(Hosts.CoordinateOf(appliance));
            }
        }
        var record = new JobRecord
        {
            JobId = jobId,
            Attempt = 0,
            Description = description,
            InputName = input.Name,
            InputChunks = input.Chunks.Count,
            OutputDataset = outputDataset,
            SubmittedUnixMs = _control.UnixMs,
            Directory = directory,
            Reduces = new (Coordinate, ReduceReport)?[description.ReduceTasks],
        };
        var tracker = new JobTracker(record, Hosts, _control.Servers.Count, participants, _control.Now, _control.UnixMs);
        _jobs[jobId] = tracker;
        if (accepted is not null)
        {
            tracker.WhenAccepted(accepted);
        }
        _control.Log(LogLevel.Info, $"job {jobId:x16}: {description.Job} on '{input.Name}' ({input.Chunks.Count} chunks), R={description.ReduceTasks}, {description.Mode}, output {(outputDataset is null ? "local files" : $"dataset '{outputDataset}'")}");
        Replicate(tracker, () =>
        {
            if (!tracker.IsOver)
            {
                tracker.Accept();
                SendStart(tracker);
            }
        });
        ArmStallCheck(tracker);
        return tracker;
    }

    /// <summary>Each chunk to its first replica among <paramref name="view"/>; every server of the view takes part, with or without chunks.</summary>
    private SortedDictionary<int, IReadOnlyList<Key>> Assign(string dataset, IEnumerable<Key> chunks, ServerSet view)
    {
        var assignment = view.Members().ToDictionary(s => s, _ => new List<Key>());
        foreach (var chunk in chunks)
        {
            var replicas = ChunkPlacement.Targets(_control.Mapper, chunk, view);
            if (replicas.Count == 0)
            {
                throw new JobControlException($"no replica server of input chunk {chunk} is reachable");
            }
            assignment[Hosts.IndexOf(replicas[0])].Add(chunk);
        }
        if (assignment.Values.Max(c => c.Count) > MaxMapTasksPerServer)
        {
            throw new JobControlException($"dataset '{dataset}' puts more than {MaxMapTasksPerServer} chunks on one server; store it with a larger chunk size");
        }
        var directory = new SortedDictionary<int, IReadOnlyList<Key>>();
        foreach (var (server, ids) in assignment)
        {
            directory[server] = [.. ids.Order()];
        }
        return directory;
    }

    /// <summary>The reachable appliances: hosts past the servers that take part in every stream shuffle.</summary>
    private IEnumerable<int> Appliances() => _control.Appliances.Where(h => _control.IsReachable(Hosts.CoordinateOf(h)));

    private void SendStart(JobTracker job)
    {
        var body = new StartMessage(job.Description, job.OutputDataset, job.Record.Directory).Encode();
        foreach (var server in job.Participants)
        {
            var s = server;
            Channel.SendReliable(server, JobMessage.Start, job.JobId, (uint)job.Attempt, body,
                onGiveUp: () => FailJob(job, $"server {s.Name} never acknowledged the job"));
        }
    }

    public Delivery OnMapDone(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        var r = new ControlWire.Reader(body);
        var report = MapReport.Read(ref r);
        if (!r.Ok || !r.AtEnd)
        {
            return Delivery.Malformed;
        }
        if (!_jobs.TryGetValue(header.JobId, out var job))
        {
            return Delivery.NotYet; // coordinated elsewhere, or not yet taken over here
        }
        if (job.IsOver || header.Extra != (uint)job.Attempt || !job.Participants.Contains(from))
        {
            return Delivery.Acknowledge;
        }
        job.Touch(_control.Now);
        if (!job.RecordMap(from, report))
        {
            return Delivery.Acknowledge;
        }
        if (!report.Ok)
        {
            FailJob(job, $"the map task of server {from.Name} failed: {report.Error}");
            return Delivery.Acknowledge;
        }
        StartShuffleWhenMapped(job);
        return Delivery.Acknowledge;
    }

    /// <summary>Every host still in the job has mapped: start the shuffle everywhere at once.</summary>
    private void StartShuffleWhenMapped(JobTracker job)
    {
        if (job.State != JobState.Mapping || job.IsOver || !job.Accepted || !job.EveryServerMapped)
        {
            return;
        }
        job.State = JobState.Shuffling;
        job.MapsDoneAt = _control.Now;
        job.Record.MapsDoneUnixMs = _control.UnixMs;
        long delay = _control.Options.SynchronousStart;
        job.StartAt = delay > 0 ? _control.Node.ClusterTime + delay : 0;
        if (job.ShuffleStartedAt == 0)
        {
            // A started-over attempt keeps the first start: the job's time runs from there.
            job.ShuffleStartedAt = _control.Now + delay;
            job.Record.ShuffleStartedUnixMs = _control.UnixMs + (delay / 1_000_000);
        }
        Replicate(job);
        SendShuffle(job);
    }

    /// <summary>Tells every server to start the shuffle (at the agreed instant, when there is one).</summary>
    private void SendShuffle(JobTracker job)
    {
        byte[] body = [];
        if (job.StartAt > 0)
        {
            var w = new ControlWire.Writer(8);
            w.I64(job.StartAt);
            body = w.ToArray();
        }
        // The farthest first: they wait longest for the word, and a port sends its queue in order.
        foreach (var c in job.Participants.OrderByDescending(p => _control.Hosts.Distance(_control.Self, p)).ThenBy(Hosts.IndexOf))
        {
            var s = c;
            Channel.SendReliable(c, JobMessage.Shuffle, job.JobId, (uint)job.Attempt, body,
                onGiveUp: () => FailJob(job, $"server {s.Name} never acknowledged the shuffle start"));
        }
    }

    public Delivery OnProgress(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        var r = new ControlWire.Reader(body);
        var totals = WorkerTotals.Read(ref r);
        if (!r.Ok || !r.AtEnd)
        {
            return Delivery.Malformed;
        }
        if (_jobs.TryGetValue(header.JobId, out var job) && !job.IsOver && header.Extra == (uint)job.Attempt)
        {
            job.Touch(_control.Now);
            job.RecordTotals(Hosts.IndexOf(from), totals);
        }
        return Delivery.Acknowledge;
    }

    public Delivery OnReduceDone(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        var r = new ControlWire.Reader(body);
        int attempt = (int)r.U32();
        var report = ReduceReport.Read(ref r);
        if (!r.Ok || !r.AtEnd || report.ReduceTask != (int)header.Extra)
        {
            return Delivery.Malformed;
        }
        if (!_jobs.TryGetValue(header.JobId, out var job))
        {
            return Delivery.NotYet;
        }
        int task = report.ReduceTask;
        if (job.IsOver || job.Finishing || attempt != job.Attempt || task >= job.Description.ReduceTasks || job.Reduces[task] is not null
            || !job.Participants.Contains(from))
        {
            return Delivery.Acknowledge;
        }
        job.Touch(_control.Now);
        job.Reduces[task] = (from, report);
        ReplicateUpdate(job, JobRecord.EncodeReduceDone(Hosts, job.Attempt, from, report));
        if (report.OutlivesItsServer && job.Description.Mode != ShuffleMode.Tcp)
        {
            ArmDoneNotice(job);
        }
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
        return Delivery.Acknowledge;
    }

    public Delivery OnFailed(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        var r = new ControlWire.Reader(body);
        string reason = r.String();
        if (!r.Ok || !r.AtEnd)
        {
            return Delivery.Malformed;
        }
        if (!_jobs.TryGetValue(header.JobId, out var job))
        {
            return Delivery.NotYet;
        }
        if (!job.IsOver && header.Extra == (uint)job.Attempt && job.Participants.Contains(from))
        {
            FailJob(job, $"failed on {from.Name}: {reason}");
        }
        return Delivery.Acknowledge;
    }

    private void StoreOutputManifest(JobTracker job)
    {
        var chunks = job.Reduces.Select(x => new ManifestChunk(x!.Value.Report.Chunk!.Value, x.Value.Report.ChunkLength, x.Value.Report.ChunkChecksum)).ToList();
        var manifest = new DatasetManifest
        {
            Name = job.OutputDataset!,
            TotalBytes = chunks.Sum(c => c.Length),
            CreatedUnixMs = _control.UnixMs,
            Chunks = chunks,
        };
        var (meta, bytes) = manifest.ToChunk();
        _control.Store!.Write(meta, bytes, result =>
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
        job.FinishedAt = _control.Now;
        job.Record.FinishedUnixMs = _control.UnixMs;
        _control.Log(LogLevel.Info, $"job {job.JobId:x16} done in {(job.FinishedAt - job.SubmittedAt) / 1e9:0.000} s (shuffle and reduce {(job.FinishedAt - job.ShuffleStartedAt) / 1e9:0.000} s)");
        Replicate(job);
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
        job.FinishedAt = _control.Now;
        job.Record.FinishedUnixMs = _control.UnixMs;
        _control.Log(LogLevel.Warning, $"job {job.JobId:x16} failed: {reason}");
        Replicate(job);
        EndEverywhere(job);
        Ended(job);
    }

    /// <summary>Kills a job coordinated here. Throws <see cref="JobControlException"/> when it is unknown here or already over.</summary>
    public JobTracker Kill(ulong jobId)
    {
        var job = GetJob(jobId)
            ?? throw new JobControlException($"unknown job {jobId:x16}");
        if (job.IsOver || job.Finishing)
        {
            string state = job.Finishing && !job.IsOver ? "done" : job.State.Name();
            throw new JobControlException($"job {jobId:x16} has already finished ({state}): nothing to kill");
        }
        job.State = JobState.Killed;
        job.Failure = "killed by an operator";
        job.FinishedAt = _control.Now;
        job.Record.FinishedUnixMs = _control.UnixMs;
        _control.Log(LogLevel.Warning, $"job {jobId:x16} killed by an operator while {(job.ShuffleStartedAt > 0 ? "shuffling" : "mapping")}");
        Replicate(job);
        EndEverywhere(job, discardOutput: true);
        Ended(job);
        return job;
    }

    /// <summary>
    /// A killed job with an output dataset may have stored some reduce outputs as chunks: once every server has dropped
    /// the job, they are deleted from every replica (the manifest was never written, so no one can read them anyway).
    /// </summary>
    private void DeleteKilledOutput(JobTracker job)
    {
        if (job.OutputDataset is not { } name || job.OutputDeleted || _control.Store is null)
        {
            return;
        }
        job.OutputDeleted = true;
        _control.Store.DeleteDataset(name, result =>
        {
            if (result.Deleted > 0)
            {
                _control.Log(LogLevel.Info, $"job {job.JobId:x16}: deleted {result.Deleted} replicas of its partial output '{name}'");
            }
        });
    }

    public void OnEndAcknowledged(Coordinate server, ulong jobId, uint attempt, WorkerTotals? totals)
    {
        if (!_jobs.TryGetValue(jobId, out var job) || attempt != (uint)job.Attempt)
        {
            return;
        }
        if (totals is { } t)
        {
            job.RecordTotals(Hosts.IndexOf(server), t);
        }
        job.EndAcknowledgedBy.Add(server);
        CompleteWhenEndedEverywhere(job);
    }

    /// <summary>Every host still in the job has dropped it: a finishing job is done.</summary>
    private void CompleteWhenEndedEverywhere(JobTracker job)
    {
        if (!job.EndedEverywhere)
        {
            return;
        }
        if (job.EndedAt == 0)
        {
            job.EndedAt = _control.Now;
        }
        if (job.Finishing && job.State != JobState.Done)
        {
            job.State = JobState.Done;
            Replicate(job);
            Ended(job);
        }
        if (job.State == JobState.Killed)
        {
            DeleteKilledOutput(job);
        }
    }

    private void EndEverywhere(JobTracker job, bool discardOutput = false)
    {
        foreach (var c in job.Participants)
        {
            // Whatever was still being retried for this job is moot now.
            Channel.CancelAll(c, job.JobId, JobMessage.Start, JobMessage.Shuffle, JobMessage.ReducesDone);
            var s = c;
            SendEnd(c, job, discardOutput, () => OnEndAcknowledged(s, job.JobId, (uint)job.Attempt, null));
        }
    }

    /// <summary>
    /// Tells <paramref name="server"/> the job is over for it (reliably). With <paramref name="discardOutput"/> (the job
    /// was killed) it also deletes the partial reduce outputs on its disk.
    /// </summary>
    private void SendEnd(Coordinate server, JobTracker job, bool discardOutput = false, Action? onGiveUp = null)
    {
        // A participant of a job that completed hears so; a server fenced out of it, or a failed job's, does not.
        byte[] body = discardOutput ? [ControlWire.EndDiscardOutput]
            : job.Finishing && job.State != JobState.Failed && job.Participants.Contains(server) ? [ControlWire.EndCompleted]
            : [];
        Channel.SendReliable(server, JobMessage.End, job.JobId, (uint)job.Attempt, body, onGiveUp);
    }

    private void ArmStallCheck(JobTracker job)
    {
        _control.Node.SetTimer(_control.Options.StallTimeout / 4, () =>
        {
            if (job.IsOver || job.Finishing || _stopped || !_jobs.ContainsKey(job.JobId))
            {
                return;
            }
            if (_control.Now - job.LastHeard > _control.Options.StallTimeout)
            {
                FailJob(job, $"no server reported progress for {_control.Options.StallTimeout / 1e9:0} s");
                return;
            }
            ArmStallCheck(job);
        });
    }

    /// <summary>Keeps at most <see cref="JobControlOptions.MaxEndedJobs"/> ended jobs here: the oldest go.</summary>
    private void Ended(JobTracker job)
    {
        _ended.Add(job.JobId);
        while (_ended.Count > _control.Options.MaxEndedJobs)
        {
            ulong oldest = _ended[0];
            _ended.RemoveAt(0);
            if (_jobs.TryGetValue(oldest, out var old) && old.IsOver && old.EndedEverywhere)
            {
                _jobs.Remove(oldest);
            }
        }
    }

    /// <summary>
    /// Tells every server, a little later and for every task done meanwhile at once, which reduce tasks are done with
    /// an output that outlives its root: none of them starts over if its root is lost later.
    /// </summary>
    private void ArmDoneNotice(JobTracker job)
    {
        if (job.DoneNoticeArmed)
        {
            return;
        }
        job.DoneNoticeArmed = true;
        _control.Node.SetTimer(_control.Options.DoneNoticeInterval, () =>
        {
            job.DoneNoticeArmed = false;
            if (_stopped || job.IsOver || job.Finishing || !_jobs.ContainsKey(job.JobId))
            {
                return;
            }
            int tasks = job.Description.ReduceTasks;
            var bits = new byte[(tasks + 7) / 8];
            for (int r = 0; r < tasks; r++)
            {
                if (job.Reduces[r] is { } done && done.Report.OutlivesItsServer)
                {
                    bits[r / 8] |= (byte)(1 << (r % 8));
                }
            }
            var w = new ControlWire.Writer(8 + bits.Length);
            w.U32((uint)job.Attempt);
            w.Bytes(bits);
            byte[] body = w.ToArray();
            foreach (var server in job.Participants)
            {
                // A newer notice replaces one not yet acknowledged.
                Channel.SendReliable(server, JobMessage.ReducesDone, job.JobId, 0, body);
            }
        });
    }

    private uint NextSequence() => ++_updateSequence;
}
