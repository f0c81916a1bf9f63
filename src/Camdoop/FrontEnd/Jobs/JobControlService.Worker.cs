using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Records;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.FrontEnd.Jobs;

// Worker: every server's side of a job. Maps the chunks it is the primary of, starts the shuffle when told, reports
// progress and its reduce tasks, stores outputs in the chunk store when asked, and cleans up at the end.
public sealed partial class JobControlService
{
    private readonly Dictionary<ulong, WorkerJob> _work = [];

    /// <summary>Final counts of ended jobs, to acknowledge a repeated End the same way.</summary>
    private readonly Dictionary<ulong, WorkerTotals> _ended = [];
    private bool _progressTimer;

    /// <summary>A job this server takes part in, or null.</summary>
    internal WorkerJob? GetWork(ulong jobId) => _work.GetValueOrDefault(jobId);

    private bool OnStart(Coordinate from, ulong jobId, ReadOnlySpan<byte> payload)
    {
        var r = JobControlWire.Body(payload);
        var encoded = r.Bytes();
        string output = r.String();
        var torus = Context.Torus;
        int groups = r.U16();
        var directory = new Dictionary<Coordinate, IReadOnlyList<Key>>();
        for (int g = 0; g < groups && r.Ok; g++)
        {
            int server = r.U16();
            int count = r.U16();
            var chunks = new List<Key>(Math.Min(count, JobControlWire.MaxPayload / Key.Size));
            for (int i = 0; i < count && r.Ok; i++)
            {
                chunks.Add(r.Key());
            }
            if (server >= torus.Count || !directory.TryAdd(torus.CoordinateOf(server), chunks))
            {
                return false;
            }
        }
        if (!r.Ok || !r.AtEnd)
        {
            return false;
        }
        if (_work.ContainsKey(jobId))
        {
            SendAck(from, JobMessage.Start, jobId, 0); // our first acknowledgement was lost
            return true;
        }
        if (!JobDescriptionCodec.TryDecode(encoded, out var description, out string? error) || description!.JobId != jobId)
        {
            Context.Log(LogLevel.Warning, $"job control: bad job description from {from.Name}: {error}");
            return false;
        }
        if (output.Length > 0 && !ChunkMeta.IsValidName(output))
        {
            return false;
        }
        var work = new WorkerJob(from, description, output.Length > 0 ? output : null, directory, [.. directory.GetValueOrDefault(Context.Self) ?? []]);
        _work[jobId] = work;
        SendAck(from, JobMessage.Start, jobId, 0);
        PrepareChunks(work);
        return true;
    }

    /// <summary>Makes sure this server holds a good replica of every chunk it maps, fetching one when not.</summary>
    private void PrepareChunks(WorkerJob work)
    {
        var store = Store;
        int pending = 0;
        foreach (var id in work.Chunks)
        {
            if (store.Local.Verify(id) == ReplicaHealth.Good && store.Local.TryGet(id, out var held))
            {
                work.ChunkPaths[id] = held.DataPath;
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
                        Context.Log(LogLevel.Info, $"job control: fetched input chunk {chunk} from {result.From.Name} to map it here");
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
        string dataDirectory = Context.DataDirectory;
        long sortBuffer = Options.MapSortBufferBytes;
        var inputs = work.Chunks.Select(id => (id, work.ChunkPaths[id])).ToList();
        var outputs = new List<MapOutput>();
        IMapReduceJob? job = null;
        string? failure = null;
        long started = Context.Now;
        void Work()
        {
            try
            {
                job = Options.Jobs.Create(description.Job);
                foreach (var (id, path) in inputs)
                {
                    outputs.Add(MapTask.Run(job, path, new MapTaskOptions
                    {
                        ReduceTasks = description.ReduceTasks,
                        JobId = description.JobId,
                        MapTaskId = id.Middle,
                        OutputDirectory = RunFileLayout.MapTaskDirectory(dataDirectory, description.JobId, id.Middle),
                        SortBufferBytes = sortBuffer,
                    }));
                }
            }
            // a bad job, input or disk fails the job on this server, never the server
            catch (Exception e)
            {
                failure = e is JobLoadException ? e.Message : $"{e.GetType().Name}: {e.Message}";
                foreach (var o in outputs)
                {
                    o.Dispose();
                }
                outputs.Clear();
            }
        }
        void Then()
        {
            long elapsed = Context.Now - started;
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
        Context.RunOffLoop(Work, Then);
    }

    private void ReportMap(WorkerJob work, MapReport report)
    {
        work.Mapped = report.Ok;
        if (!report.Ok)
        {
            Context.Log(LogLevel.Warning, $"job {work.Description.JobId:x16}: map phase failed here: {report.Error}");
        }
        var w = JobControlWire.Begin(_frame, JobMessage.MapDone, work.Description.JobId);
        w.U8(report.Ok ? (byte)1 : (byte)0);
        w.U16(report.MapTasks);
        w.I64(report.InputBytes);
        w.I64(report.InputRecords);
        w.I64(report.IntermediateBytes);
        w.I64(report.MapNanoseconds);
        w.String(report.Error);
        SendReliable(work.Coordinator, JobMessage.MapDone, work.Description.JobId, 0, _frame.AsSpan(0, w.Length).ToArray());
    }

    private bool OnShuffle(Coordinate from, ulong jobId)
    {
        if (!_work.TryGetValue(jobId, out var work) || !work.Mapped)
        {
            return true; // not ready (or unknown): the coordinator asks again
        }
        SendAck(from, JobMessage.Shuffle, jobId, 0);
        if (work.Shuffling)
        {
            return true;
        }
        work.Shuffling = true;
        try
        {
            work.ResentBefore = Camdoop.Counters.ResentBytes;
            var job = work.Job ?? throw new InvalidOperationException("the job was not loaded");
            if (work.Description.Mode == ShuffleMode.Tcp)
            {
                // TCP Camdoop: map outputs go straight to their reducers over the switch, not over the torus's trees.
                var direct = _direct ?? throw new InvalidOperationException("this server has no TCP transport (it is not on a switch network)");
                work.DirectJob = direct.StartJob(work.Description, job, work.MapOutputs);
            }
            else
            {
                work.ServerJob = Camdoop.StartJob(work.Description, job, work.MapOutputs, new WorkerMapTasks(this, work, work.Directory));
            }
        }
        // a job that cannot start fails, the server carries on
        catch (Exception e)
        {
            ReportFailure(work, $"the shuffle could not start: {e.Message}");
            return true;
        }
        ArmProgressReports();
        return true;
    }

    /// <summary>Reports progress periodically while any job here is shuffling (again, after a failure gave it work).</summary>
    private void ArmProgressReports()
    {
        if (!_progressTimer && _work.Values.Any(w => (w.ServerJob is not null || w.DirectJob is not null) && !w.Ended))
        {
            _progressTimer = true;
            Context.SetTimer(Options.ProgressInterval, ReportProgress);
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
                var w = JobControlWire.Begin(_frame, JobMessage.Progress, work.Description.JobId);
                progress.Write(ref w);
                Send(work.Coordinator, _frame.AsSpan(0, w.Length));
            }
            any |= !(work.ServerJob?.IsFinished ?? work.DirectJob!.IsFinished);
        }
        if (any)
        {
            _progressTimer = true;
            Context.SetTimer(Options.ProgressInterval, ReportProgress);
        }
    }

    private void OnReduceTaskCompleted(ReduceTaskResult result)
    {
        if (!_work.TryGetValue(result.JobId, out var work) || work.Ended)
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
        Context.RunOffLoop(
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
        var torus = Context.Torus;
        var meta = new ChunkMeta
        {
            Id = Key.FromCoordinate(torus, Context.Self, Key.FromString(FormattableString.Invariant($"camdoop/output/{work.OutputDataset}/{result.ReduceTask}/{result.JobId:x16}"))),
            Kind = ChunkKind.Data,
            Length = bytes.Length,
            Checksum = checksum,
            Dataset = work.OutputDataset!,
            Index = result.ReduceTask,
            Count = work.Description.ReduceTasks,
        };
        Store.Write(meta, bytes, stored =>
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
        var w = JobControlWire.Begin(_frame, JobMessage.ReduceDone, result.JobId);
        w.U32((uint)result.ReduceTask);
        w.I64(result.Records);
        w.I64(result.LogicalBytes);
        w.I64(result.FileBytes);
        w.U64(result.Checksum);
        w.String(result.OutputPath is null ? null : Path.GetRelativePath(Context.DataDirectory, result.OutputPath));
        w.U8(stored is null ? (byte)0 : (byte)1);
        if (stored is not null)
        {
            w.Key(stored.Id);
            w.I64(stored.Length);
            w.U64(stored.Checksum);
        }
        SendReliable(work.Coordinator, JobMessage.ReduceDone, result.JobId, result.ReduceTask, _frame.AsSpan(0, w.Length).ToArray());
    }

    private void OnCamdoopJobFailed(ServerJob job)
    {
        if (_work.TryGetValue(job.JobId, out var work))
        {
            ReportFailure(work, job.Failure ?? "the shuffle failed");
        }
    }

    private void OnDirectJobFailed(DirectJob job)
    {
        if (_work.TryGetValue(job.JobId, out var work))
        {
            ReportFailure(work, job.Failure ?? "the TCP shuffle failed");
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
        Context.Log(LogLevel.Warning, $"job {work.Description.JobId:x16} failed here: {reason}");
        var w = JobControlWire.Begin(_frame, JobMessage.Failed, work.Description.JobId);
        w.String(reason);
        SendReliable(work.Coordinator, JobMessage.Failed, work.Description.JobId, 0, _frame.AsSpan(0, w.Length).ToArray());
    }

    private bool OnEnd(Coordinate from, ulong jobId, ReadOnlySpan<byte> payload)
    {
        var r = JobControlWire.Body(payload);
        bool discardOutput = !r.AtEnd && r.U8() == JobControlWire.EndDiscardOutput;
        if (!r.Ok || !r.AtEnd)
        {
            return false;
        }
        if (!_work.TryGetValue(jobId, out var work))
        {
            SendAck(from, JobMessage.End, jobId, 0, _ended.GetValueOrDefault(jobId));
            return true;
        }
        // The final counts ride on the acknowledgement, which is reliable where progress reports are not.
        var totals = Totals(work);
        _ended[jobId] = totals;
        SendAck(from, JobMessage.End, jobId, 0, totals);
        work.DiscardOutput = discardOutput;
        DropWork(work);
        return true;
    }

    /// <summary>
    /// What this server did for the job: bytes its vertices delivered, bytes sent again (the service's count since the
    /// shuffle started: concurrent jobs would share it), lost servers' map tasks run again and vertices taken over here.
    /// </summary>
    private WorkerTotals Totals(WorkerJob work) => work.ServerJob is { } job
        ? new WorkerTotals(job.Vertices.Sum(v => v.Output.Acknowledged), Camdoop.Counters.ResentBytes - work.ResentBefore, job.RerunCount, job.AdoptedCount)
        : work.DirectJob is { } direct ? new WorkerTotals(direct.BytesSent, 0, 0, 0) : default;

    /// <summary>Forgets a job here: its shuffle state, its map outputs (intermediate data); reduce outputs stay.</summary>
    private void DropWork(WorkerJob work)
    {
        ulong jobId = work.Description.JobId;
        _work.Remove(jobId);
        work.Ended = true;
        Camdoop.RemoveJob(jobId);
        _direct?.RemoveJob(jobId);
        work.DisposeMapOutputs();
        // Map outputs are intermediate data: gone with the job. Reduce outputs stay, unless the job was killed.
        string jobDirectory = RunFileLayout.JobDirectory(Context.DataDirectory, jobId);
        if (work.DiscardOutput)
        {
            DeleteJobDirectory(jobId, jobDirectory);
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
            Context.Log(LogLevel.Warning, $"job {jobId:x16}: could not delete its map outputs: {e.Message}");
        }
    }

    /// <summary>
    /// Deletes a killed job's whole directory here (map outputs and partial reduce outputs), off the loop. A map task
    /// still running then deletes it again when it ends (<see cref="RunMaps"/>).
    /// </summary>
    private void DeleteJobDirectory(ulong jobId, string jobDirectory)
    {
        string? error = null;
        Context.RunOffLoop(
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
                    Context.Log(LogLevel.Warning, $"job {jobId:x16}: could not delete its files: {error}");
                }
            });
    }

    /// <summary>One job on this server.</summary>
    internal sealed class WorkerJob(Coordinate coordinator, JobDescription description, string? outputDataset,
        IReadOnlyDictionary<Coordinate, IReadOnlyList<Key>> directory, List<Key> chunks)
    {
        public Coordinate Coordinator { get; } = coordinator;

        public JobDescription Description { get; } = description;

        public string? OutputDataset { get; } = outputDataset;

        /// <summary>The chunk ids every server maps, as the coordinator assigned them.</summary>
        public IReadOnlyDictionary<Coordinate, IReadOnlyList<Key>> Directory { get; } = directory;

        /// <summary>The chunk ids this server maps.</summary>
        public List<Key> Chunks { get; } = chunks;

        public Dictionary<Key, string> ChunkPaths { get; } = [];

        public int PendingChunks { get; set; }

        public string? PrepareError { get; set; }

        public IReadOnlyList<MapOutput> MapOutputs { get; set; } = [];

        /// <summary>The job, loaded (through this server's catalog) when its map tasks ran.</summary>
        public IMapReduceJob? Job { get; set; }

        public bool Mapped { get; set; }

        public bool Shuffling { get; set; }

        public ServerJob? ServerJob { get; set; }

        /// <summary>This server's part of a TCP Camdoop job (mode tcp), in place of <see cref="ServerJob"/>.</summary>
        public DirectJob? DirectJob { get; set; }

        public WorkerTotals LastReported { get; set; } = new(-1, 0, 0, 0);

        /// <summary>The service's resent-bytes counter when this job's shuffle started.</summary>
        public long ResentBefore { get; set; }

        public bool Ended { get; set; }

        /// <summary>The job was killed: its partial reduce outputs go with its map outputs.</summary>
        public bool DiscardOutput { get; set; }

        public void DisposeMapOutputs()
        {
            foreach (var output in MapOutputs)
            {
                output.Dispose();
            }
        }
    }
}
