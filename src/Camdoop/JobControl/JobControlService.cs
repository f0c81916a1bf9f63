using Camdoop.ChunkStore;
using Camdoop.JobControl.Channel;
using Camdoop.JobControl.Wire;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.JobControl;

/// <summary>What job control works with on its server, handed to it by whoever builds the server's services.</summary>
public sealed record JobControlParts
{
    /// <summary>How it reaches the other servers and learns who is alive.</summary>
    public required IControlNetwork Network { get; init; }

    /// <summary>The chunk store: input chunks and their replicas, output datasets. Null: only the chunks on this server's own disk.</summary>
    public ChunkStoreService? Store { get; init; }

    /// <summary>The torus shuffle (modes camdoop and noagg); null where it does not run.</summary>
    public CamdoopService? Camdoop { get; init; }

    /// <summary>The stream shuffle (TCP Camdoop, mode tcp); null on a server with no byte streams to the others.</summary>
    public DirectShuffleService? Direct { get; init; }

    /// <summary>How map tasks run; null: indexed run files under the job's directory.</summary>
    public IMapTaskRunner? MapTasks { get; init; }

    /// <summary>
    /// The job's servers, when this server's torus also holds appliances (hosts past the servers, such as NetAgg's agg
    /// boxes, which only merge and forward in a stream shuffle); null: every host is a server.
    /// </summary>
    public Torus? Servers { get; init; }

    /// <summary>Hosts past the servers that take part in every stream shuffle (NetAgg's agg boxes); none by default.</summary>
    public IReadOnlyList<int> Appliances { get; init; } = [];

    /// <summary>A TCP Camdoop job's aggregation trees over the servers still in it; null (or a null answer): the direct plan.</summary>
    public Func<JobDescription, ServerSet, IAggregationPlan?>? Plans { get; init; }
}

/// <summary>
/// Job control (service 5), on every server: the coordinator of the jobs whose control key this server owns, the
/// worker of every job, the keeper of copies of other coordinators' job state, and the answers to any front-end's
/// questions about any job. They share one reliable control channel. The shuffles themselves are the Camdoop service's
/// and the stream shuffle's; job control starts them, hears what they finish and cleans up.
/// </summary>
public sealed class JobControlService : IService, IOwnershipListener
{
    private readonly JobControlParts _parts;
    private ControlContext? _control;
    private JobCoordinator? _coordinator;
    private JobWorker? _worker;
    private RecordKeeper? _keeper;
    private JobQueries? _queries;
    private bool _stopped;

    public JobControlService(JobControlParts parts, JobControlOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(parts);
        ArgumentNullException.ThrowIfNull(parts.Network);
        Options = options ?? new JobControlOptions();
        Options.Validate();
        _parts = parts;
    }

    public byte Id => WellKnownServices.JobControl;

    public string Name => "job-control";

    public JobControlOptions Options { get; }

    /// <summary>Frames that did not parse, and messages found malformed.</summary>
    public long MalformedFrames => Channel?.MalformedFrames ?? 0;

    /// <summary>Control messages never acknowledged within the allowed tries.</summary>
    public long GaveUpMessages => Channel?.GaveUpMessages ?? 0;

    /// <summary>Control fragments sent again because no acknowledgement came in time.</summary>
    public long RetriedMessages => Channel?.Retries ?? 0;

    /// <summary>The reliable channel (its counters), once started.</summary>
    public ControlChannel? Channel => _control?.Channel;

    /// <summary>Jobs this server took over from a coordinator that died.</summary>
    public int Takeovers => _coordinator?.Takeovers ?? 0;

    /// <summary>Copies of other coordinators' job state kept here.</summary>
    public int RecordCopies => _keeper?.Count ?? 0;

    /// <summary>The copy of <paramref name="jobId"/>'s state kept here for its coordinator, if any.</summary>
    internal JobRecord? KeptCopy(ulong jobId) => _keeper?.GetCopy(jobId);

    /// <summary>Times this server's worker turned to a new coordinator.</summary>
    public int CoordinatorChanges => _worker?.CoordinatorChanges ?? 0;

    /// <summary>The stream shuffle of TCP Camdoop jobs on this server, when it has one.</summary>
    public DirectShuffleService? Direct => _parts.Direct;

    /// <summary>The job's servers (the hosts' first indices; the rest are appliances).</summary>
    public Torus Servers => Control.Servers;

    /// <summary>Jobs coordinated here, those over included.</summary>
    public IReadOnlyCollection<JobTracker> CoordinatedJobs => _coordinator?.Jobs ?? [];

    /// <summary>Jobs this server takes part in now (their shuffle ids and whether they are done here).</summary>
    public IReadOnlyCollection<(ulong JobId, ulong ShuffleId, bool Finished)> WorkerJobs =>
        _worker is null ? [] : [.. _worker.Jobs.Select(w => (w.JobId, w.Description.JobId, w.IsFinished))];

    private ControlContext Control => _control ?? throw new InvalidOperationException("job control has not started");

    public void Start(INodeContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        var servers = _parts.Servers ?? context.Torus;
        var channel = new ControlChannel(context, _parts.Network, Options.RetryInterval, Options.MinRetryInterval, Options.MaxAttempts, Deliver, OnAcknowledged);
        _control = new ControlContext(context, channel, _parts.Network, Options, servers, _parts.Store, _parts.Appliances);
        _coordinator = new JobCoordinator(_control);
        _keeper = new RecordKeeper(_control, _coordinator);
        _queries = new JobQueries(_control, _coordinator, _keeper);
        var local = _parts.Store?.Local ?? OpenLocalChunks(context);
        _worker = new JobWorker(_control, _parts.MapTasks ?? new RunFileMapTaskRunner(Options.MapSortBufferBytes), _parts.Camdoop, _parts.Direct, _parts.Plans, local);
        // After the shuffle's own listener (registered when it started): the shuffle has taken a loss in when job control hears of it.
        _parts.Network.AddOwnershipListener(this);
    }

    public void Stop()
    {
        _stopped = true;
        _coordinator?.Stop();
        _worker?.Stop();
        _control?.Channel.Stop();
    }

    public void OnFrame(in InboundFrame frame) => Control.Channel.OnFrame(frame.Header.Source, frame.Payload);

    public void OnSendReady(Port port) => _control?.Channel.OnSendReady();

    public void OnOwnershipChanged(OwnershipChange change)
    {
        ArgumentNullException.ThrowIfNull(change);
        if (_stopped)
        {
            return;
        }
        _coordinator!.OnOwnershipChanged(change);
        if (change.BecameUnreachable.Count > 0)
        {
            _keeper!.OnServersLost();
        }
        _worker!.OnOwnershipChanged(change);
    }

    /// <summary>
    /// Starts a job over <paramref name="input"/>, coordinated here (this server must own the job's control key:
    /// <see cref="NewJobId"/>). With <paramref name="outputDataset"/> the reduce outputs go to the chunk store as
    /// that dataset. <paramref name="accepted"/> runs once the job's state is kept where it should be and the servers
    /// are told. Throws <see cref="JobControlException"/> when the job cannot start.
    /// </summary>
    public JobTracker Submit(JobDescription description, DatasetManifest input, string? outputDataset = null, Action<JobTracker>? accepted = null) =>
        _coordinator!.Submit(description, input, outputDataset, accepted);

    /// <summary>A fresh job id whose control key this server owns now, so that a job submitted here is coordinated here.</summary>
    public ulong NewJobId(Func<ulong> next)
    {
        ArgumentNullException.ThrowIfNull(next);
        return JobKeys.NewJobId(Control.Servers, Control.Self, Control.ReachableServers(), next);
    }

    /// <summary>The server that coordinates <paramref name="jobId"/> in this server's view (the owner of its control key).</summary>
    public Coordinate? CoordinatorOf(ulong jobId) => Control.CoordinatorOf(jobId, Control.ReachableServers());

    /// <summary>A job coordinated here, or null.</summary>
    public JobTracker? GetJob(ulong jobId) => _coordinator?.GetJob(jobId);

    /// <summary>Kills a job coordinated here. Throws <see cref="JobControlException"/> when it is unknown here or already over.</summary>
    public JobTracker Kill(ulong jobId) => _coordinator!.Kill(jobId);

    /// <summary>Any job's status, wherever it is coordinated (answered on the event loop); null with the reason when none answers.</summary>
    public void Status(ulong jobId, Action<JobSnapshot?, string?> done) => _queries!.Status(jobId, done);

    /// <summary>Kills any job at its coordinator; its snapshot, or null with the reason.</summary>
    public void KillAnywhere(ulong jobId, Action<JobSnapshot?, string?> done) => _queries!.Kill(jobId, done);

    /// <summary>Every job coordinated on the reachable servers.</summary>
    public void ListJobs(Action<JobListing> done) => _queries!.List(done);

    /// <summary>A stream of this server's TCP transport failed: every TCP Camdoop job here fails (it has no recovery).</summary>
    public void OnStreamFailed(Coordinate peer, string reason) => _worker?.OnStreamFailed(peer, reason);

    private Delivery Deliver(Coordinate from, ControlHeader header, ReadOnlySpan<byte> body)
    {
        if (_stopped)
        {
            return Delivery.NotYet;
        }
        return header.Kind switch
        {
            JobMessage.Start => _worker!.OnStart(from, header, body),
            JobMessage.Shuffle => _worker!.OnShuffle(from, header, body),
            JobMessage.End => _worker!.OnEnd(from, header, body),
            JobMessage.ReducesDone => _worker!.OnReducesDone(header, body),
            JobMessage.MapDone => _coordinator!.OnMapDone(from, header, body),
            JobMessage.Progress => _coordinator!.OnProgress(from, header, body),
            JobMessage.ReduceDone => _coordinator!.OnReduceDone(from, header, body),
            JobMessage.Failed => _coordinator!.OnFailed(from, header, body),
            JobMessage.Record => _keeper!.OnRecord(from, body),
            JobMessage.RecordUpdate => _keeper!.OnRecordUpdate(header.JobId, body),
            JobMessage.Query => _queries!.OnQuery(from, header, body),
            JobMessage.QueryReply => _queries!.OnQueryReply(from, header, body),
            _ => Delivery.Malformed,
        };
    }

    private void OnAcknowledged(Coordinate from, ControlHeader header, JobMessage kind, ReadOnlySpan<byte> body)
    {
        if (kind != JobMessage.End)
        {
            return;
        }
        WorkerTotals? totals = null;
        if (!body.IsEmpty)
        {
            var r = new ControlWire.Reader(body);
            var t = WorkerTotals.Read(ref r);
            totals = r.Ok && r.AtEnd ? t : null;
        }
        _coordinator!.OnEndAcknowledged(from, header.JobId, header.Extra, totals);
    }

    /// <summary>A server without the chunk store service still maps the chunks on its own disk.</summary>
    private static LocalChunkStore OpenLocalChunks(INodeContext context)
    {
        var local = new LocalChunkStore(context.DataDirectory);
        local.Open();
        return local;
    }
}
