using Camdoop.JobControl.Wire;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>
/// The coordinator's view of one job: its replicated control state (<see cref="JobRecord"/>) and what only the
/// coordinator tracks (which servers mapped and acknowledged the end, their progress, times on its own clock).
/// Mutated on the event loop; snapshots are taken there too.
/// </summary>
public sealed class JobTracker
{
    private readonly HashSet<Coordinate> _mapped = [];
    private readonly List<Action<JobTracker>> _accepted = [];

    internal JobTracker(JobRecord record, Torus hosts, int servers, IEnumerable<Coordinate> participants, long now, long unixNowMs)
    {
        Record = record;
        Participants = [.. participants];
        Servers = Participants.Count(p => hosts.IndexOf(p) < servers);
        long Local(long unixMs) => unixMs == 0 ? 0 : now - ((unixNowMs - unixMs) * 1_000_000);
        SubmittedAt = Local(record.SubmittedUnixMs);
        MapsDoneAt = Local(record.MapsDoneUnixMs);
        ShuffleStartedAt = Local(record.ShuffleStartedUnixMs);
        FinishedAt = Local(record.FinishedUnixMs);
        LastHeard = now;
        ShuffleBytesByServer = new long[hosts.Count];
        ResentBytesByServer = new long[hosts.Count];
        MapTasksRerunByServer = new int[hosts.Count];
        VerticesAdoptedByServer = new int[hosts.Count];
    }

    /// <summary>The control state the coordinator keeps copies of.</summary>
    internal JobRecord Record { get; }

    public ulong JobId => Record.JobId;

    /// <summary>The current attempt's description (its job id is the attempt's shuffle id).</summary>
    public JobDescription Description => Record.Description;

    public int Attempt => Record.Attempt;

    public string InputName => Record.InputName;

    public string? OutputDataset => Record.OutputDataset;

    /// <summary>Servers that took part in the current attempt when it started (appliances not counted).</summary>
    public int Servers { get; private set; }

    /// <summary>Hosts still in the current attempt: those it started on, less every one lost since.</summary>
    public HashSet<Coordinate> Participants { get; private set; }

    /// <summary>Servers lost while the job ran, in the order their loss was seen.</summary>
    public IReadOnlyList<ServerLoss> Losses => Record.Losses;

    internal HashSet<Coordinate> EndAcknowledgedBy { get; } = [];

    public JobState State
    {
        get => Record.State;
        internal set => Record.State = value;
    }

    public bool IsOver => State.IsOver();

    /// <summary>Every host still in the job has acknowledged its end (for a killed job: dropped its part).</summary>
    public bool EndedEverywhere => (Finishing || IsOver) && Participants.All(EndAcknowledgedBy.Contains);

    /// <summary>Every reduce task is done; waiting for the servers to acknowledge the end (and report final counts).</summary>
    public bool Finishing
    {
        get => Record.Finishing;
        internal set => Record.Finishing = value;
    }

    public string? Failure
    {
        get => Record.Failure;
        internal set => Record.Failure = value;
    }

    /// <summary>The partial output dataset of a killed job has been deleted (or is being).</summary>
    internal bool OutputDeleted { get; set; }

    /// <summary>The job's control state is kept where it should be, and the servers were told to start.</summary>
    public bool Accepted { get; private set; }

    public int MapTasksAssigned => Record.InputChunks;

    public int MapsDone => _mapped.Count;

    /// <summary>Every host still in the attempt has reported its map phase.</summary>
    public bool EveryServerMapped => Participants.All(_mapped.Contains);

    public long InputBytes => Record.InputBytes;

    public long InputRecords => Record.InputRecords;

    /// <summary>Key plus value bytes after the map-side combine: what the shuffle would carry without aggregation.</summary>
    public long IntermediateBytes => Record.IntermediateBytes;

    public long[] ShuffleBytesByServer { get; }

    public long ShuffleBytes => ShuffleBytesByServer.Sum();

    internal long[] ResentBytesByServer { get; }

    internal int[] MapTasksRerunByServer { get; }

    internal int[] VerticesAdoptedByServer { get; }

    /// <summary>Bytes sent again to recover from failures, over every server.</summary>
    public long ResentBytes => ResentBytesByServer.Sum();

    public int MapTasksRerun => MapTasksRerunByServer.Sum();

    public int VerticesAdopted => VerticesAdoptedByServer.Sum();

    public (Coordinate Server, ReduceReport Report)?[] Reduces => Record.Reduces;

    public int ReducesDone => Record.Reduces.Count(r => r is not null);

    /// <summary>Times on this coordinator's clock (ns); after a takeover, converted from the copied state's Unix times.</summary>
    public long SubmittedAt { get; }

    public long MapsDoneAt { get; internal set; }

    public long ShuffleStartedAt { get; internal set; }

    /// <summary>A notice of the reduce tasks done is due (see <see cref="JobControlOptions.DoneNoticeInterval"/>).</summary>
    internal bool DoneNoticeArmed { get; set; }

    /// <summary>The instant every server starts the shuffle, on the servers' shared clock; 0: each when told.</summary>
    internal long StartAt { get; set; }

    public long FinishedAt { get; internal set; }

    public long LastHeard { get; private set; }

    /// <summary>When every host still in the job had acknowledged its end (this coordinator's clock); 0 until then.</summary>
    public long EndedAt { get; internal set; }

    /// <summary>Runs <paramref name="action"/> once the job is accepted (at once if it already is).</summary>
    public void WhenAccepted(Action<JobTracker> action)
    {
        ArgumentNullException.ThrowIfNull(action);
        if (Accepted)
        {
            action(this);
        }
        else
        {
            _accepted.Add(action);
        }
    }

    internal void Accept()
    {
        if (Accepted)
        {
            return;
        }
        Accepted = true;
        foreach (var action in _accepted)
        {
            action(this);
        }
        _accepted.Clear();
    }

    internal void Touch(long now) => LastHeard = now;

    /// <summary>A new attempt starts on <paramref name="participants"/>: nothing of the last one counts.</summary>
    internal void Restart(IEnumerable<Coordinate> participants, Torus hosts, int servers)
    {
        Participants = [.. participants];
        Servers = Participants.Count(p => hosts.IndexOf(p) < servers);
        _mapped.Clear();
        EndAcknowledgedBy.Clear();
        // The new attempt maps every chunk again: its totals are the job's, not added to the last attempt's.
        Record.InputBytes = 0;
        Record.InputRecords = 0;
        Record.IntermediateBytes = 0;
    }

    /// <summary>A server's counts so far (progress reports and end acknowledgements may arrive in any order).</summary>
    internal void RecordTotals(int server, WorkerTotals totals)
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
        Record.InputBytes += report.InputBytes;
        Record.InputRecords += report.InputRecords;
        Record.IntermediateBytes += report.IntermediateBytes;
        return true;
    }

    /// <summary>The job as a client sees it, taken on the coordinator's loop.</summary>
    public JobSnapshot Snapshot(Coordinate coordinator, long now)
    {
        var d = Description;
        long end = IsOver || Finishing ? FinishedAt : now;
        return new JobSnapshot
        {
            JobId = JobId,
            Job = d.Job.ToString(),
            Input = InputName,
            Reducers = d.ReduceTasks,
            Mode = d.Mode.Name(),
            Trees = d.Trees.Name(),
            State = State,
            Finishing = Finishing,
            Coordinator = coordinator,
            Attempt = Attempt,
            Servers = Servers,
            MapsDone = ShuffleStartedAt > 0 ? Servers : Math.Min(MapsDone, Servers),
            MapTasks = MapTasksAssigned,
            InputBytes = InputBytes,
            IntermediateBytes = IntermediateBytes,
            ShuffleBytes = ShuffleBytes,
            ReducesDone = ReducesDone,
            SubmittedUnixMs = Record.SubmittedUnixMs,
            JobSeconds = (end - SubmittedAt) / 1e9,
            MapSeconds = ((MapsDoneAt > 0 ? MapsDoneAt : end) - SubmittedAt) / 1e9,
            ShuffleReduceSeconds = ShuffleStartedAt > 0 ? (end - ShuffleStartedAt) / 1e9 : 0.0,
            Failure = Failure,
            OutputDataset = OutputDataset,
            Outputs = [.. Reduces.Where(r => r is not null).Select(r => new OutputLocation(
                r!.Value.Report.ReduceTask, r.Value.Server, r.Value.Report.OutputPath, r.Value.Report.Chunk, r.Value.Report.Records, r.Value.Report.FileBytes))],
            Losses = [.. Losses],
            ResentBytes = ResentBytes,
            MapTasksRerun = MapTasksRerun,
            VerticesAdopted = VerticesAdopted,
        };
    }
}
