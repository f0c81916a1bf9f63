using Camdoop.ChunkStore;
using Camdoop.JobControl.Channel;
using Camdoop.JobControl.Wire;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Records;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>
/// Every server's side of a job: maps the chunks the coordinator assigned it, starts the shuffle when told, reports
/// progress and its reduce tasks, stores outputs in the chunk store when asked, and cleans up at the end. It reports
/// to the job's coordinator; when that server is lost it reports to the next owner of the job's control key, which
/// takes the job over, and tells it again everything it had reported.
/// </summary>
internal sealed partial class JobWorker
{
    private readonly ControlContext _control;
    private readonly IMapTaskRunner _runner;
    private readonly CamdoopService? _camdoop;
    private readonly DirectShuffleService? _direct;
    private readonly Func<JobDescription, ServerSet, IAggregationPlan?>? _plans;
    private readonly LocalChunkStore _localChunks;
    private readonly Dictionary<ulong, WorkerJob> _work = [];
    private readonly HashSet<int> _lostAppliances = [];

    /// <summary>Final counts of ended jobs, to acknowledge a repeated End the same way.</summary>
    private readonly Dictionary<ulong, WorkerTotals> _ended = [];
    private bool _progressTimer;
    private bool _stopped;

    public JobWorker(ControlContext control, IMapTaskRunner runner, CamdoopService? camdoop, DirectShuffleService? direct,
        Func<JobDescription, ServerSet, IAggregationPlan?>? plans, LocalChunkStore localChunks)
    {
        _control = control;
        _runner = runner;
        _camdoop = camdoop;
        _direct = direct;
        _plans = plans;
        _localChunks = localChunks;
        if (camdoop is not null)
        {
            camdoop.ReduceTaskCompleted += OnReduceTaskCompleted;
            camdoop.JobFailed += job => OnShuffleFailed(job.JobId, job.Failure ?? "the shuffle failed");
        }
        if (direct is not null)
        {
            direct.ReduceTaskCompleted += OnReduceTaskCompleted;
            direct.JobFailed += job => OnShuffleFailed(job.JobId, job.Failure ?? "the TCP shuffle failed");
        }
    }

    /// <summary>Jobs this server takes part in.</summary>
    public IReadOnlyCollection<WorkerJob> Jobs => _work.Values;

    /// <summary>Times this server turned to a new coordinator because the last one was lost.</summary>
    public int CoordinatorChanges { get; private set; }

    public WorkerJob? GetWork(ulong jobId) => _work.GetValueOrDefault(jobId);

    private ControlChannel Channel => _control.Channel;

    private Torus Hosts => _control.Hosts;

    public void Stop()
    {
        _stopped = true;
        foreach (var work in _work.Values)
        {
            work.DisposeMapOutputs();
        }
    }

    public Delivery OnStart(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        int attempt = (int)header.Extra;
        if (_work.TryGetValue(header.JobId, out var current))
        {
            if (attempt < current.Attempt || (attempt == current.Attempt && !AcceptFrom(current, from)))
            {
                return Delivery.Acknowledge; // stale, or from a server no longer in the job
            }
            if (attempt == current.Attempt)
            {
                return Delivery.Acknowledge; // our first acknowledgement was lost
            }
        }
        else if (_ended.ContainsKey(header.JobId))
        {
            return Delivery.Acknowledge; // a repeat of a start for a job over here
        }
        var start = StartMessage.Decode(body, Hosts, out string? error);
        if (start is null)
        {
            _control.Log(LogLevel.Warning, $"job control: bad job start from {from.Name}: {error}");
            return Delivery.Malformed;
        }
        if (start.OutputDataset is { } output && !ChunkMeta.IsValidName(output))
        {
            return Delivery.Malformed;
        }
        if (current is not null)
        {
            // The job starts over as its next attempt: this server's part of the last one goes, its partial outputs too.
            current.DiscardOutput = true;
            DropWork(current);
        }
        var chunks = start.Directory.GetValueOrDefault(_control.SelfIndex) ?? [];
        var work = new WorkerJob(header.JobId, attempt, from, start, chunks);
        foreach (int host in start.Directory.Keys)
        {
            var member = Hosts.CoordinateOf(host);
            if (_control.IsReachable(member))
            {
                work.Members.Add(member);
            }
        }
        _work[header.JobId] = work;
        _ended.Remove(header.JobId);
        if (work.Description.Mode != ShuffleMode.Tcp)
        {
            // Servers start the shuffle as the coordinator's word reaches them: hold what the sooner ones send here.
            _camdoop?.Expect(work.Description.JobId);
        }
        PrepareChunks(work);
        return Delivery.Acknowledge;
    }

    /// <summary>Makes sure this server holds a good replica of every chunk it maps, fetching one when not.</summary>
    private void PrepareChunks(WorkerJob work)
    {
        int pending = 0;
        foreach (var id in work.Chunks)
        {
            if (_localChunks.Verify(id) == ReplicaHealth.Good && _localChunks.TryGet(id, out var held))
            {
                work.ChunkPaths[id] = held.DataPath;
                continue;
            }
            if (_control.Store is not { } store)
            {
                work.PrepareError ??= $"input chunk {id} is not on this server, and it runs no chunk store to fetch it";
                continue;
            }
            pending++;
            var chunk = id;
            store.Read(chunk, result =>
            {
                if (work.Ended)
                {
                    return;
                }
                if (!result.Ok)
                {
                    work.PrepareError ??= $"input chunk {chunk}: {result.Error}";
                    ChunkPrepared(work);
                    return;
                }
                store.StoreLocal(result.Meta!, result.Bytes, writeError =>
                {
                    if (work.Ended)
                    {
                        return;
                    }
                    if (writeError is null && store.Local.TryGet(chunk, out var stored))
                    {
                        work.ChunkPaths[chunk] = stored.DataPath;
                        _control.Log(LogLevel.Info, $"job control: fetched input chunk {chunk} from {result.From.Name} to map it here");
                    }
                    else
                    {
                        work.PrepareError ??= $"input chunk {chunk}: {writeError ?? "the replica vanished"}";
                    }
                    ChunkPrepared(work);
                });
            });
        }
        work.PendingChunks = pending;
        if (pending == 0)
        {
            RunMaps(work);
        }
    }

    private void ChunkPrepared(WorkerJob work)
    {
        if (--work.PendingChunks == 0)
        {
            RunMaps(work);
        }
    }

    private void RunMaps(WorkerJob work)
    {
        if (work.PrepareError is not null)
        {
            ReportMap(work, new MapReport(false, 0, 0, 0, 0, 0, work.PrepareError));
            return;
        }
        var description = work.Description;
        var context = _control.Node;
        string dataDirectory = context.DataDirectory;
        var inputs = work.Chunks.Select(id => (id, work.ChunkPaths[id])).ToList();
        var outputs = new List<MapOutput>();
        IMapReduceJob? job = null;
        string? failure = null;
        long started = context.Now;
        var catalog = _control.Options.Jobs;
        var runner = _runner;
        void Work()
        {
            try
            {
                job = catalog.Create(description.Job);
                foreach (var (id, path) in inputs)
                {
                    outputs.Add(runner.Run(job, description, id, path, dataDirectory));
                }
            }
            // a bad job, input or disk fails the job on this server, never the server
            catch (Exception e)
            {
                // Input the job cannot read, or a program of a streaming job that fails, is the user's to fix: its
                // message says what is wrong.
                failure = e is JobLoadException or InvalidDataException or RecordTooLargeException or FormatException or StreamingCommandException
                    ? e.Message
                    : $"{e.GetType().Name}: {e.Message}";
                foreach (var o in outputs)
                {
                    o.Dispose();
                }
                outputs.Clear();
            }
        }
        void Then()
        {
            long elapsed = context.Now - started;
            if (work.Ended)
            {
                foreach (var o in outputs)
                {
                    o.Dispose();
                }
                if (work.DiscardOutput)
                {
                    DeleteJobDirectory(description.JobId, RunFileLayout.JobDirectory(dataDirectory, description.JobId));
                }
                return;
            }
            work.MapOutputs = outputs;
            work.Job = job;
            ReportMap(work, failure is not null
                ? new MapReport(false, 0, 0, 0, 0, elapsed, failure)
                : new MapReport(true, outputs.Count, outputs.Sum(o => o.Stats.InputBytes), outputs.Sum(o => o.Stats.InputRecords),
                    outputs.Sum(o => o.Stats.IntermediateLogicalBytes), elapsed, null));
        }
        // Off the loop, so it keeps serving frames and beacons while the map tasks run.
        context.RunOffLoop(Work, Then);
    }

    private void ReportMap(WorkerJob work, MapReport report)
    {
        work.Mapped = report.Ok;
        work.MapReport = report;
        if (!report.Ok)
        {
            _control.Log(LogLevel.Warning, $"job {work.JobId:x16}: map phase failed here: {report.Error}");
        }
        SendMapReport(work);
    }

    private void SendMapReport(WorkerJob work)
    {
        var w = new ControlWire.Writer(64);
        work.MapReport!.Write(w);
        Channel.SendReliable(work.Coordinator, JobMessage.MapDone, work.JobId, (uint)work.Attempt, w.Written, () => Abandon(work));
    }

    public Delivery OnShuffle(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        long startAt = 0;
        if (!body.IsEmpty)
        {
            var r = new ControlWire.Reader(body);
            startAt = r.I64();
            if (!r.Ok || !r.AtEnd)
            {
                return Delivery.Malformed;
            }
        }
        if (!_work.TryGetValue(header.JobId, out var work))
        {
            return Delivery.NotYet; // its start has not come yet: the coordinator asks again
        }
        if (header.Extra < (uint)work.Attempt)
        {
            return Delivery.Acknowledge; // an attempt started over since
        }
        if (header.Extra > (uint)work.Attempt || !work.Mapped)
        {
            return Delivery.NotYet;
        }
        if (!AcceptFrom(work, from))
        {
            return Delivery.NotYet;
        }
        if (work.Shuffling)
        {
            return Delivery.Acknowledge;
        }
        work.Shuffling = true;
        // At the agreed instant: unless the shared clock says it passed, or is so far off that it cannot be trusted.
        long wait = startAt == 0 ? 0 : startAt - _control.Node.ClusterTime;
        if (wait > 0 && wait <= MaxStartWait)
        {
            _control.Node.SetTimer(wait, () =>
            {
                if (!work.Ended && !_stopped)
                {
                    StartShuffle(work);
                }
            });
        }
        else
        {
            StartShuffle(work);
        }
        return Delivery.Acknowledge;
    }

    /// <summary>Longest a server waits for an agreed start: a start further off means the clocks disagree.</summary>
    private const long MaxStartWait = 10_000L * NodeOptions.Millisecond;

    private void StartShuffle(WorkerJob work)
    {
        try
        {
            var job = work.Job ?? throw new InvalidOperationException("the job was not loaded");
            if (work.Description.Mode == ShuffleMode.Tcp)
            {
                // TCP Camdoop: map outputs go straight to their reducers over the switch, not over the torus's trees.
                var direct = _direct ?? throw new InvalidOperationException("this server has no TCP transport (it is not on a switch network)");
                var members = _control.ServerView(work.Directory.Keys.Select(Hosts.CoordinateOf));
                work.Plan = _plans?.Invoke(work.Description, members) ?? PlanWithout.DirectOver(work.Description, _control.Servers, members);
                foreach (int appliance in _lostAppliances)
                {
                    if (work.Plan is IApplianceTolerantPlan tolerant)
                    {
                        work.Plan = tolerant.WithoutAppliance(appliance);
                    }
                }
                work.DirectJob = direct.StartJob(work.Description, job, work.MapOutputs, work.Plan);
            }
            else
            {
                var camdoop = _camdoop ?? throw new InvalidOperationException("this server runs no Camdoop service");
                work.ResentBefore = camdoop.Counters.ResentBytes;
                work.ServerJob = camdoop.StartJob(work.Description, job, work.MapOutputs, new WorkerMapTasks(_control, _runner, work));
                foreach (int task in work.DoneReduceTasks)
                {
                    work.ServerJob.NoteReduceTaskDone(task);
                }
            }
        }
        // a job that cannot start fails, the server carries on
        catch (Exception e)
        {
            ReportFailure(work, $"the shuffle could not start: {e.Message}");
            return;
        }
        ArmProgressReports();
    }

    /// <summary>The coordinator tells which reduce tasks are done with an output that outlives their root: none starts over.</summary>
    public Delivery OnReducesDone(ControlHeader header, ReadOnlySpan<byte> body)
    {
        var r = new ControlWire.Reader(body);
        int attempt = (int)r.U32();
        var bits = r.Bytes();
        if (!r.Ok || !r.AtEnd)
        {
            return Delivery.Malformed;
        }
        if (_work.TryGetValue(header.JobId, out var work) && attempt == work.Attempt)
        {
            for (int t = 0; t < Math.Min(work.Description.ReduceTasks, bits.Length * 8); t++)
            {
                if ((bits[t / 8] & (1 << (t % 8))) != 0 && work.DoneReduceTasks.Add(t))
                {
                    work.ServerJob?.NoteReduceTaskDone(t);
                }
            }
        }
        return Delivery.Acknowledge;
    }

    /// <summary>Reports progress periodically while any job here is shuffling (again, after a failure gave it work).</summary>
    public void ArmProgressReports()
    {
        if (!_progressTimer && !_stopped && _work.Values.Any(w => (w.ServerJob is not null || w.DirectJob is not null) && !w.Ended))
        {
            _progressTimer = true;
            _control.Node.SetTimer(_control.Options.ProgressInterval, ReportProgress);
        }
    }

    private void ReportProgress()
    {
        _progressTimer = false;
        if (_stopped)
        {
            return;
        }
        bool any = false;
        var w = new ControlWire.Writer(32);
        foreach (var work in _work.Values)
        {
            if ((work.ServerJob is null && work.DirectJob is null) || work.Ended)
            {
                continue;
            }
            var progress = Totals(work);
            if (progress != work.LastReported)
            {
                work.LastReported = progress;
                w = new ControlWire.Writer(32);
                progress.Write(w);
                Channel.SendOnce(work.Coordinator, JobMessage.Progress, work.JobId, (uint)work.Attempt, w.Written);
            }
            any |= !work.IsFinished;
        }
        if (any)
        {
            _progressTimer = true;
            _control.Node.SetTimer(_control.Options.ProgressInterval, ReportProgress);
        }
    }

    private void OnReduceTaskCompleted(ReduceTaskResult result)
    {
        var work = _work.Values.FirstOrDefault(w => w.Description.JobId == result.JobId);
        if (work is null || work.Ended)
        {
            return;
        }
        if (work.OutputDataset is null || result.OutputPath is null)
        {
            ReportReduce(work, result, null);
            return;
        }
        // The reducer stores its output as a chunk of which it is the primary replica (the Camdoop paper, §4). The file
        // is read off the loop.
        byte[]? bytes = null;
        ulong checksum = 0;
        string? error = null;
        _control.Node.RunOffLoop(
            () =>
            {
                try
                {
                    bytes = File.ReadAllBytes(result.OutputPath);
                    checksum = XxHash64.Hash(bytes);
                }
                catch (IOException e)
                {
                    error = e.Message;
                }
            },
            () =>
            {
                if (work.Ended)
                {
                    return;
                }
                if (bytes is null)
                {
                    ReportFailure(work, $"reading the output of reduce task {result.ReduceTask}: {error}");
                    return;
                }
                StoreOutput(work, result, bytes, checksum);
            });
    }

    private void StoreOutput(WorkerJob work, ReduceTaskResult result, byte[] bytes, ulong checksum)
    {
        var store = _control.Store;
        if (store is null)
        {
            ReportFailure(work, "this server runs no chunk store to keep the output dataset in");
            return;
        }
        var meta = new ChunkMeta
        {
            Id = Key.FromCoordinate(_control.Hosts, _control.Self, Key.FromString(FormattableString.Invariant($"camdoop/output/{work.OutputDataset}/{result.ReduceTask}/{work.JobId:x16}"))),
            Kind = ChunkKind.Data,
            Length = bytes.Length,
            Checksum = checksum,
            Dataset = work.OutputDataset!,
            Index = result.ReduceTask,
            Count = work.Description.ReduceTasks,
        };
        store.Write(meta, bytes, stored =>
        {
            if (stored.Ok)
            {
                ReportReduce(work, result, meta);
            }
            else
            {
                ReportFailure(work, $"storing the output of reduce task {result.ReduceTask}: {stored.Error}");
            }
        });
    }

    private void ReportReduce(WorkerJob work, ReduceTaskResult result, ChunkMeta? stored)
    {
        string? path = result.OutputPath is null ? null : Path.GetRelativePath(_control.Node.DataDirectory, result.OutputPath);
        var report = new ReduceReport(result.ReduceTask, result.Records, result.LogicalBytes, result.FileBytes, result.Checksum, path,
            stored?.Id, stored?.Length ?? 0, stored?.Checksum ?? 0);
        var w = new ControlWire.Writer(128);
        w.U32((uint)work.Attempt);
        report.Write(w);
        work.ReduceReports[result.ReduceTask] = w.ToArray();
        Channel.SendReliable(work.Coordinator, JobMessage.ReduceDone, work.JobId, (uint)result.ReduceTask, work.ReduceReports[result.ReduceTask], () => Abandon(work));
    }

    private void OnShuffleFailed(ulong shuffleId, string reason)
    {
        var work = _work.Values.FirstOrDefault(w => w.Description.JobId == shuffleId);
        if (work is not null)
        {
            ReportFailure(work, reason);
        }
    }

    /// <summary>A stream of this server's TCP transport failed: every TCP Camdoop job here fails (it has no recovery).</summary>
    public void OnStreamFailed(Coordinate peer, string reason)
    {
        foreach (var work in _work.Values.Where(w => w.DirectJob is not null && !w.Ended && !w.DirectJob.IsFinished).ToList())
        {
            ReportFailure(work, $"a TCP stream with {peer.Name} failed: {reason}");
        }
    }

    private void ReportFailure(WorkerJob work, string reason)
    {
        _control.Log(LogLevel.Warning, $"job {work.JobId:x16} failed here: {reason}");
        work.Failure ??= reason;
        SendFailure(work);
    }

    private void SendFailure(WorkerJob work)
    {
        var w = new ControlWire.Writer(128);
        w.String(work.Failure);
        Channel.SendReliable(work.Coordinator, JobMessage.Failed, work.JobId, (uint)work.Attempt, w.Written, () => Abandon(work));
    }

    public Delivery OnEnd(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        bool discardOutput = body.Length == 1 && body[0] == ControlWire.EndDiscardOutput;
        bool completed = body.Length == 1 && body[0] == ControlWire.EndCompleted;
        if (body.Length > 1 || (body.Length == 1 && !discardOutput && !completed))
        {
            return Delivery.Malformed;
        }
        if (!_work.TryGetValue(header.JobId, out var work) || header.Extra < (uint)work.Attempt)
        {
            return Delivery.AcknowledgeWith(EncodeTotals(_ended.GetValueOrDefault(header.JobId)));
        }
        // The final counts ride on the acknowledgement, which is reliable where progress reports are not.
        var totals = Totals(work);
        _ended[header.JobId] = totals;
        work.DiscardOutput = discardOutput;
        DropWork(work, completed);
        return Delivery.AcknowledgeWith(EncodeTotals(totals));
    }

    private static byte[] EncodeTotals(WorkerTotals totals)
    {
        var w = new ControlWire.Writer(32);
        totals.Write(w);
        return w.ToArray();
    }

    /// <summary>
    /// What this server did for the job: bytes its vertices delivered, bytes sent again (the service's count since the
    /// shuffle started: concurrent jobs would share it), lost servers' map tasks run again and vertices taken over here.
    /// </summary>
    private WorkerTotals Totals(WorkerJob work) => work.ServerJob is { } job
        ? new WorkerTotals(job.Vertices.Sum(v => v.Output.Acknowledged), _camdoop!.Counters.ResentBytes - work.ResentBefore, job.RerunCount, job.AdoptedCount)
        : work.DirectJob is { } direct ? new WorkerTotals(direct.BytesSent, direct.ResentBytes, 0, 0) : default;

    /// <summary>
    /// No coordinator took a report for all its tries: the job's coordinator and the servers keeping copies of its
    /// state are gone, and nobody will end the job. Its part here goes (its reduce outputs stay).
    /// </summary>
    private void Abandon(WorkerJob work)
    {
        if (work.Ended || _stopped)
        {
            return;
        }
        _control.Log(LogLevel.Warning, $"job {work.JobId:x16}: no coordinator answers ({work.Coordinator.Name} was the last asked); dropping the job here");
        DropWork(work);
    }

    /// <summary>
    /// Forgets a job here: its shuffle state, its map outputs (intermediate data); reduce outputs stay.
    /// <paramref name="completed"/>: the coordinator said the job completed.
    /// </summary>
    private void DropWork(WorkerJob work, bool completed = false)
    {
        ulong shuffleId = work.Description.JobId;
        if (_work.TryGetValue(work.JobId, out var current) && ReferenceEquals(current, work))
        {
            _work.Remove(work.JobId);
        }
        work.Ended = true;
        Channel.CancelJob(work.JobId, JobMessage.MapDone, JobMessage.ReduceDone, JobMessage.Failed);
        _camdoop?.RemoveJob(shuffleId, completed);
        _direct?.RemoveJob(shuffleId, completed);
        work.DisposeMapOutputs();
        // Map outputs are intermediate data: gone with the job. Reduce outputs stay, unless the job was killed.
        string jobDirectory = RunFileLayout.JobDirectory(_control.Node.DataDirectory, shuffleId);
        if (work.DiscardOutput)
        {
            DeleteJobDirectory(shuffleId, jobDirectory);
            return;
        }
        try
        {
            if (Directory.Exists(jobDirectory))
            {
                foreach (var mapDirectory in Directory.EnumerateDirectories(jobDirectory, "map-*"))
                {
                    Directory.Delete(mapDirectory, recursive: true);
                }
            }
        }
        catch (IOException e)
        {
            _control.Log(LogLevel.Warning, $"job {work.JobId:x16}: could not delete its map outputs: {e.Message}");
        }
    }

    /// <summary>
    /// Deletes a killed job's whole directory here (map outputs and partial reduce outputs), off the loop. A map task
    /// still running then deletes it again when it ends (<see cref="RunMaps"/>).
    /// </summary>
    private void DeleteJobDirectory(ulong shuffleId, string jobDirectory)
    {
        string? error = null;
        _control.Node.RunOffLoop(
            () =>
            {
                try
                {
                    if (Directory.Exists(jobDirectory))
                    {
                        Directory.Delete(jobDirectory, recursive: true);
                    }
                }
                catch (IOException e)
                {
                    error = e.Message;
                }
            },
            () =>
            {
                if (error is not null)
                {
                    _control.Log(LogLevel.Warning, $"job {shuffleId:x16}: could not delete its files: {error}");
                }
            });
    }
}
