using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// The stream shuffle of one host (TCP Camdoop, the Camdoop paper's switched baseline, §5.1): the same map outputs
/// and merge code as the Camdoop modes, but map outputs travel over byte streams: straight to their reducer (the
/// direct plan, where only the reducer merges) or up the aggregation trees of an <see cref="IAggregationPlan"/>,
/// merged and combined at each interior vertex. The streams are an <see cref="IStreamTransport"/>: the simulator's packet-level TCP, or
/// a real server's sockets; nothing here knows which. Single-threaded, on the node's event loop: it acts when a
/// job starts and when the transport calls back.
/// </summary>
public sealed class DirectShuffleService : IStreamAcceptor
{
    private readonly Dictionary<ulong, DirectJob> _jobs = [];
    private readonly List<InboundDirectStream> _early = [];

    // Jobs that lost a stream's bytes before they started here, and why: they fail as they start, not wait for ever.
    private readonly Dictionary<ulong, string> _overflowed = [];
    private const int MaxOverflowedJobs = 1024;

    // Admissions that came before their job started here (its start reaches servers at different times).
    private readonly List<(ulong JobId, int ReduceTask, int Tree)> _earlyAdmissions = [];
    private const int MaxEarlyAdmissions = 1 << 16;

    /// <summary>
    /// The shuffle on one host. <paramref name="servers"/> is the job's servers' torus (placement, validation): a
    /// prefix of the hosts' torus in index order, the hosts past it being appliances that only merge and forward.
    /// Default: every host is a server.
    /// </summary>
    public DirectShuffleService(INodeContext context, IStreamTransport transport, DirectShuffleOptions? options = null, Torus? servers = null)
    {
        ArgumentNullException.ThrowIfNull(context);
        ArgumentNullException.ThrowIfNull(transport);
        Options = options ?? new DirectShuffleOptions();
        Options.Validate();
        var hosts = context.Torus;
        servers ??= hosts;
        if (servers.SizeY != hosts.SizeY || servers.SizeZ != hosts.SizeZ || servers.SizeX > hosts.SizeX)
        {
            throw new ArgumentException($"the servers' torus {servers} is not a prefix (whole x-planes) of the hosts' torus {hosts}", nameof(servers));
        }
        Servers = servers;
        Context = context;
        Transport = transport;
        transport.Listen(this);
    }

    public INodeContext Context { get; }

    /// <summary>The job's servers: host indices below its count; the hosts past them are appliances.</summary>
    public Torus Servers { get; }

    public IStreamTransport Transport { get; }

    public DirectShuffleOptions Options { get; }

    public IReadOnlyCollection<DirectJob> Jobs => _jobs.Values;

    /// <summary>Streams read and dropped: for no job, reduce task or tree here, a second from one sender, or ended before their preamble.</summary>
    public long StreamsDropped { get; internal set; }

    /// <summary>Raised (on the event loop) when a reduce task rooted on this server has written its last output byte.</summary>
    public event Action<ReduceTaskResult>? ReduceTaskCompleted;

    /// <summary>Raised when a job fails on this server (corrupt stream, a job function threw).</summary>
    public event Action<DirectJob>? JobFailed;

    /// <summary>Raised (on the event loop) when this host starts its part of a job.</summary>
    public event Action<DirectJob>? JobStarted;

    /// <summary>Raised (on the event loop) just before a job is forgotten.</summary>
    public event Action<DirectJob>? JobRemoving;

    public DirectJob? GetJob(ulong jobId) => _jobs.GetValueOrDefault(jobId);

    /// <summary>
    /// Starts this host's part of a job on the outputs of the map tasks that ran here: opens its streams to their
    /// parents (a few at a time), and makes ready its own reducers and interior vertices, which take the streams of
    /// their children. Called on every host of the job, appliances included (with no map outputs). The
    /// <paramref name="plan"/> is the aggregation trees; default <see cref="DirectPlan"/> (straight to the reducer).
    /// </summary>
    public DirectJob StartJob(JobDescription description, IMapReduceJob job, IReadOnlyList<MapOutput> mapOutputs, IAggregationPlan? plan = null)
    {
        ArgumentNullException.ThrowIfNull(description);
        ArgumentNullException.ThrowIfNull(job);
        ArgumentNullException.ThrowIfNull(mapOutputs);
        description.Validate(Servers.Count);
        if (plan is not null)
        {
            ArgumentOutOfRangeException.ThrowIfNegativeOrZero(plan.Trees, nameof(plan));
        }
        if (mapOutputs.Count > 0 && Context.Torus.IndexOf(Context.Self) >= Servers.Count)
        {
            throw new ArgumentException($"{Context.Self} is an appliance: it has no map outputs", nameof(mapOutputs));
        }
        if (description.Mode != ShuffleMode.Tcp)
        {
            throw new ArgumentException($"the direct shuffle runs jobs of mode tcp, not {description.Mode}", nameof(description));
        }
        if (_jobs.ContainsKey(description.JobId))
        {
            throw new InvalidOperationException($"job {description.JobId:x16} is already running on {Context.Self}");
        }
        var directJob = new DirectJob(this, description, job, mapOutputs, plan);
        _jobs.Add(description.JobId, directJob);
        JobStarted?.Invoke(directJob);
        directJob.Start();
        if (_overflowed.Remove(description.JobId, out string? lost))
        {
            directJob.Fail(lost);
        }
        // Streams for this job that came before it: bind them now, in the order they came.
        var early = _early.Where(s => s.JobId == description.JobId).ToList();
        _early.RemoveAll(s => s.JobId == description.JobId);
        foreach (var stream in early)
        {
            EarlyBytes -= stream.HeldBytes;
            stream.Resume();
        }
        foreach (var (_, reduceTask, tree) in _earlyAdmissions.Where(a => a.JobId == description.JobId).ToList())
        {
            directJob.Run(() => directJob.OnAdmitted(reduceTask, tree));
        }
        _earlyAdmissions.RemoveAll(a => a.JobId == description.JobId);
        return directJob;
    }

    /// <summary>A receiver admitted this host's stream of (<paramref name="reduceTask"/>, <paramref name="tree"/>): it may send.</summary>
    internal void OnAdmitted(ulong jobId, int reduceTask, int tree)
    {
        if (_jobs.TryGetValue(jobId, out var job))
        {
            job.Run(() => job.OnAdmitted(reduceTask, tree));
        }
        else if (_earlyAdmissions.Count < MaxEarlyAdmissions)
        {
            _earlyAdmissions.Add((jobId, reduceTask, tree));
        }
        else
        {
            StreamsDropped++;
        }
    }

    /// <summary>Bytes held of streams whose job has not started here.</summary>
    public long EarlyBytes { get; private set; }

    /// <summary>Keeps a stream that came before its job; false when that would hold more than allowed.</summary>
    internal bool TryHoldEarly(InboundDirectStream stream)
    {
        if (EarlyBytes + stream.HeldBytes > Options.MaxEarlyBytes)
        {
            return false;
        }
        if (!_early.Contains(stream))
        {
            _early.Add(stream);
        }
        return true;
    }

    /// <summary>
    /// A stream of <paramref name="jobId"/> from <paramref name="sender"/> came before the job started here and could
    /// not be held: its bytes are gone, so the job fails here when it starts (at once if it runs), with the reason.
    /// </summary>
    internal void NoteEarlyOverflow(ulong jobId, int sender)
    {
        string reason = $"a stream from {Context.Torus.CoordinateOf(sender)} came before the job started on {Context.Self} and outgrew the {Options.MaxEarlyBytes} bytes held for such streams";
        if (_jobs.TryGetValue(jobId, out var running))
        {
            running.Fail(reason);
        }
        else if (_overflowed.Count < MaxOverflowedJobs)
        {
            _overflowed.TryAdd(jobId, reason);
        }
    }

    /// <summary>An early stream grew by <paramref name="bytes"/>; false (and the stream is let go) beyond the limit.</summary>
    internal bool GrowEarly(InboundDirectStream stream, int bytes)
    {
        if (EarlyBytes + bytes > Options.MaxEarlyBytes)
        {
            _early.Remove(stream);
            EarlyBytes -= stream.HeldBytes;
            return false;
        }
        EarlyBytes += bytes;
        return true;
    }

    /// <summary>
    /// Host <paramref name="failed"/>, an appliance of <paramref name="jobId"/>'s aggregation trees, is down (its
    /// peers gave up on it): the job goes on with <paramref name="plan"/>, the trees without it, which has
    /// <paramref name="nodes"/> nodes. What this host resends or cuts: <see cref="DirectJob.OnNodeFailed"/>.
    /// </summary>
    public void OnApplianceFailed(ulong jobId, int failed, IAggregationPlan plan, int nodes)
    {
        ArgumentNullException.ThrowIfNull(plan);
        if (failed < Servers.Count)
        {
            throw new ArgumentOutOfRangeException(nameof(failed), failed, "a failed server's part is not taken over in a stream shuffle");
        }
        if (_jobs.TryGetValue(jobId, out var job))
        {
            job.Run(() => job.OnNodeFailed(failed, plan, nodes));
        }
    }

    /// <summary>Forgets a job and the reducers' state; <paramref name="completed"/>: the job completed (its coordinator said so).</summary>
    public bool RemoveJob(ulong jobId, bool completed = false)
    {
        if (_jobs.TryGetValue(jobId, out var removing))
        {
            removing.CompletedEverywhere = completed;
            JobRemoving?.Invoke(removing);
        }
        foreach (var stream in _early.Where(s => s.JobId == jobId))
        {
            EarlyBytes -= stream.HeldBytes;
            stream.Drop();
        }
        _early.RemoveAll(s => s.JobId == jobId);
        _earlyAdmissions.RemoveAll(a => a.JobId == jobId);
        _overflowed.Remove(jobId);
        return _jobs.Remove(jobId);
    }

    IStreamReader? IStreamAcceptor.Accept(Coordinate peer) => new InboundDirectStream(this, Context.Torus.IndexOf(peer));

    internal void OnReduceTaskCompleted(ReduceTaskResult result) => ReduceTaskCompleted?.Invoke(result);

    internal void OnJobFailed(DirectJob job)
    {
        Context.Log(LogLevel.Error, $"job {job.JobId:x16} failed on {Context.Self}: {job.Failure}");
        JobFailed?.Invoke(job);
    }
}
