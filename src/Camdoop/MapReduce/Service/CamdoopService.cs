using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Service;

/// <summary>
/// The Camdoop MapReduce service of one server (the Camdoop paper, §4): runs the server's part of every job (map tasks, one
/// vertex per reduce task and tree, the root reducers placed here) and the shuffle transport that links vertices
/// over one-hop key-routed frames. The same code runs in the simulator and on real links: single-threaded, driven
/// by frames, timers and send-ready callbacks, acting only through its node context and the key-routing service. It
/// listens to key routing for failed servers and changed routes, which every running job recovers from (the Camdoop
/// paper, §4.2).
/// </summary>
public sealed class CamdoopService : IService, IOwnershipListener, IRouteListener
{
    private readonly Dictionary<ulong, ServerJob> _jobs = [];
    private readonly List<VertexBase> _dirty = [];
    private readonly Dictionary<ulong, List<EarlyFrame>> _expected = [];
    private long _heldBytes;
    private INodeContext? _context;
    private readonly KeyRoutingService _router;
    private ShuffleTransport? _transport;
    private bool _flushing;

    /// <param name="router">The server's key routing, over which every shuffle frame travels and which reports lost servers.</param>
    /// <param name="options">The service's settings; null: the defaults.</param>
    public CamdoopService(KeyRoutingService router, CamdoopServiceOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(router);
        _router = router;
        Options = options ?? new CamdoopServiceOptions();
        Options.Validate();
    }

    /// <summary>Registers a Camdoop service on <paramref name="host"/>, over its key routing, with its short runtime queues.</summary>
    public static CamdoopService Install(NodeHost host, CamdoopServiceOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(host);
        var router = host.GetService<KeyRoutingService>()
            ?? throw new InvalidOperationException("the Camdoop service needs the key-routing service registered first");
        var service = new CamdoopService(router, options);
        host.Register(service, service.Options.Shuffle.RuntimeQueueFrames);
        return service;
    }

    public byte Id => WellKnownServices.Camdoop;

    public string Name => "camdoop";

    public CamdoopServiceOptions Options { get; }

    public INodeContext Context => _context ?? throw new InvalidOperationException("the Camdoop service has not started");

    public ShuffleTransport Transport => _transport ?? throw new InvalidOperationException("the Camdoop service has not started");

    public ShuffleCounters Counters => Transport.Counters;

    public IReadOnlyCollection<ServerJob> Jobs => _jobs.Values;

    /// <summary>Raised (on the event loop) when a reduce task rooted on this server has written its last output byte.</summary>
    public event Action<ReduceTaskResult>? ReduceTaskCompleted;

    /// <summary>Raised when a job fails on this server (corrupt stream, a job function threw).</summary>
    public event Action<ServerJob>? JobFailed;

    /// <summary>Raised (on the event loop) when this server starts its part of a job: its vertices and roots are built.</summary>
    public event Action<ServerJob>? JobStarted;

    /// <summary>A job is about to be forgotten here (<see cref="RemoveJob"/>), its state and counters still whole.</summary>
    public event Action<ServerJob>? JobRemoving;

    public ServerJob? GetJob(ulong jobId) => _jobs.GetValueOrDefault(jobId);

    public void Start(INodeContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        _context = context;
        _transport = new ShuffleTransport(context, _router, Options.Shuffle, Flush);
        _router.AddOwnershipListener(this);
        _router.AddRouteListener(this);
    }

    /// <summary>
    /// Starts this server's part of a job now, on the outputs of the map tasks that ran here (mapped off the event
    /// loop: by the job-control worker on a node, outside virtual time in the simulator): builds the vertices and
    /// root reducers, advertises receive windows and starts sending. <paramref name="mapTasks"/> tells which map
    /// tasks ran where and runs a failed server's again. Servers unreachable now take no part in the job: their
    /// vertices and root reducers run on the servers their keys map to. The job is loaded from its spec, from any
    /// path (the simulator's own user's job).
    /// </summary>
    public ServerJob StartJob(JobDescription description, IReadOnlyList<MapOutput> mapOutputs, IMapTaskSource mapTasks)
    {
        ArgumentNullException.ThrowIfNull(description);
        return StartJob(description, JobRegistry.Create(description.Job), mapOutputs, mapTasks);
    }

    /// <summary>
    /// As <see cref="StartJob(JobDescription, IReadOnlyList{MapOutput}, IMapTaskSource)"/>, with the job already
    /// loaded by the caller (a node's job control, which loads job code only from its allowed directory).
    /// </summary>
    public ServerJob StartJob(JobDescription description, IMapReduceJob job, IReadOnlyList<MapOutput> mapOutputs, IMapTaskSource mapTasks)
    {
        ArgumentNullException.ThrowIfNull(description);
        ArgumentNullException.ThrowIfNull(job);
        ArgumentNullException.ThrowIfNull(mapOutputs);
        ArgumentNullException.ThrowIfNull(mapTasks);
        var context = Context;
        description.Validate(context.Torus.Count);
        if (description.Mode == ShuffleMode.Tcp)
        {
            throw new ArgumentException("a tcp-mode job runs on the direct shuffle (DirectShuffle.DirectShuffleService), not on the trees", nameof(description));
        }
        if (_jobs.ContainsKey(description.JobId))
        {
            throw new InvalidOperationException($"job {description.JobId:x16} is already running on {context.Self}");
        }
        // The job is built on every server, then loses those unreachable now, as failures at time zero.
        var view = new ServerSet(context.Torus.Count);
        var down = new List<Coordinate>();
        for (int i = 0; i < context.Torus.Count; i++)
        {
            view.Add(i);
            if (!_router.IsReachable(context.Torus.CoordinateOf(i)))
            {
                down.Add(context.Torus.CoordinateOf(i));
            }
        }
        var serverJob = new ServerJob(this, description, job, mapOutputs, mapTasks, view);
        _jobs[description.JobId] = serverJob;
        RebalanceWindows();
        serverJob.Start(down);
        JobStarted?.Invoke(serverJob);
        Release(serverJob);
        Flush();
        return serverJob;
    }

    /// <summary>
    /// Forgets a job, whether it finished everywhere or is still running (an operator killed it): its vertices stop,
    /// its streams leave the transport and every buffer it holds goes back to the pool (<see cref="ServerJob.Release"/>);
    /// the other jobs here get its share of the buffer budget. Its late frames are counted as unknown.
    /// <paramref name="completed"/>: the job completed (its coordinator said so).
    /// </summary>
    public bool RemoveJob(ulong jobId, bool completed = false)
    {
        Forget(jobId);
        if (!_jobs.Remove(jobId, out var job))
        {
            return false;
        }
        job.CompletedEverywhere = completed;
        JobRemoving?.Invoke(job);
        job.Release();
        Transport.Unregister(jobId);
        RebalanceWindows();
        Flush();
        return true;
    }

    /// <summary>
    /// Job <paramref name="jobId"/> will start here soon (its map tasks are running): frames of it that come first,
    /// from servers that started it sooner, are held and handed over when it starts, not dropped for an unknown job
    /// (the Camdoop paper, §4: servers may start the shuffle asynchronously).
    /// </summary>
    public void Expect(ulong jobId)
    {
        if (!_jobs.ContainsKey(jobId))
        {
            _expected.TryAdd(jobId, []);
        }
    }

    /// <summary>Job <paramref name="jobId"/> will not start here after all: what was held of it goes.</summary>
    public void Forget(ulong jobId)
    {
        if (_expected.Remove(jobId, out var held))
        {
            _heldBytes -= held.Sum(f => (long)f.Payload.Length);
        }
    }

    public void OnFrame(in InboundFrame frame)
    {
        var transport = Transport;
        var counters = transport.Counters;
        var payload = frame.Payload;
        var error = ShuffleWire.TryReadHeader(payload, out var kind, out int count, out ulong jobId);
        if (error != WireError.None)
        {
            counters.Malformed[(int)error]++;
            return;
        }
        int hops = kind == ShuffleFrameKind.Data && !frame.IsLocal ? _router.HopsTravelled(frame) : 0;
        if (!_jobs.TryGetValue(jobId, out var job) || job.Failure is not null)
        {
            if (job is null && _expected.TryGetValue(jobId, out var held) && _heldBytes + payload.Length <= Options.MaxEarlyBytes)
            {
                held.Add(new EarlyFrame(payload.ToArray(), hops, frame.Header.Source));
                _heldBytes += payload.Length;
                counters.HeldEarly++;
                return;
            }
            counters.UnknownJob++;
            return;
        }
        Process(job, kind, count, payload, hops, frame.Header.Source);
    }

    private void Process(ServerJob job, ShuffleFrameKind kind, int count, ReadOnlySpan<byte> payload, int hops, Coordinate source)
    {
        var counters = Transport.Counters;
        var torus = Context.Torus;
        int position = ShuffleWire.FrameHeaderSize;
        WireError error;
        if (kind == ShuffleFrameKind.Control)
        {
            for (int i = 0; i < count; i++)
            {
                error = ShuffleWire.TryReadResume(payload, ref position, torus, out var request);
                if (error != WireError.None)
                {
                    counters.Malformed[(int)error]++;
                    return;
                }
                try
                {
                    job.OnResume(request);
                }
                // corrupt data or a job function's bug fails the job on this server, never the server
                catch (Exception e)
                {
                    FailJob(job, e);
                }
            }
            Flush();
            return;
        }
        if (kind == ShuffleFrameKind.Data)
        {
            counters.DataFramesReceived++;
            // Validate the whole frame first: a malformed one is dropped entirely, never half-applied.
            for (int i = 0; i < count; i++)
            {
                error = ShuffleWire.TryReadSegment(payload, ref position, torus, out _);
                if (error != WireError.None)
                {
                    counters.Malformed[(int)error]++;
                    return;
                }
            }
            if (position != payload.Length)
            {
                counters.Malformed[(int)WireError.TrailingBytes]++;
                return;
            }
            position = ShuffleWire.FrameHeaderSize;
            try
            {
                for (int i = 0; i < count; i++)
                {
                    ShuffleWire.TryReadSegment(payload, ref position, torus, out var segment);
                    job.OnSegment(segment, hops, source);
                }
            }
            // corrupt data or a job function's bug fails the job on this server, never the server
            catch (Exception e)
            {
                FailJob(job, e);
            }
        }
        else
        {
            counters.AckFramesReceived++;
            for (int i = 0; i < count; i++)
            {
                error = ShuffleWire.TryReadAck(payload, ref position, torus, out var ack);
                if (error != WireError.None)
                {
                    counters.Malformed[(int)error]++;
                    return;
                }
                job.OnAck(ack);
            }
        }
        Flush();
    }

    /// <summary>Hands the frames held for a job that just started to it, in the order they came.</summary>
    private void Release(ServerJob job)
    {
        if (!_expected.Remove(job.JobId, out var held))
        {
            return;
        }
        foreach (var early in held)
        {
            _heldBytes -= early.Payload.Length;
            if (job.Failure is null && ShuffleWire.TryReadHeader(early.Payload, out var kind, out int count, out _) == WireError.None)
            {
                Process(job, kind, count, early.Payload, early.Hops, early.Source);
            }
        }
    }

    private sealed record EarlyFrame(byte[] Payload, int Hops, Coordinate Source);

    public void OnSendReady(Port port)
    {
        Transport.OnSendReady(port);
        Flush();
    }

    public void Stop()
    {
        foreach (var job in _jobs.Values)
        {
            foreach (var root in job.RootReducers)
            {
                root.Output.Dispose();
            }
            foreach (var output in job.MapOutputs)
            {
                output.Dispose();
            }
        }
    }

    internal void MarkDirty(VertexBase vertex)
    {
        if (!vertex.IsDirty)
        {
            vertex.IsDirty = true;
            _dirty.Add(vertex);
        }
    }

    /// <summary>Runs every vertex with new input or room, then fills the ports. Called after every event.</summary>
    internal void Flush()
    {
        if (_flushing)
        {
            return;
        }
        _flushing = true;
        try
        {
            for (int i = 0; i < _dirty.Count; i++)
            {
                var vertex = _dirty[i];
                vertex.IsDirty = false;
                var job = vertex.Owner;
                if (job.Failure is not null)
                {
                    continue;
                }
                try
                {
                    vertex.Pump();
                }
                // corrupt data or a job function's bug fails the job on this server, never the server
                catch (Exception e)
                {
                    FailJob(job, e);
                }
            }
            _dirty.Clear();
            Transport.Flush();
        }
        finally
        {
            _flushing = false;
        }
    }

    /// <summary>Servers became unreachable: every running job takes over what they ran (see <see cref="ServerJob"/>).</summary>
    public void OnOwnershipChanged(OwnershipChange change)
    {
        ArgumentNullException.ThrowIfNull(change);
        if (change.BecameUnreachable.Count == 0)
        {
            return;
        }
        foreach (var job in _jobs.Values)
        {
            if (job.Failure is not null)
            {
                continue;
            }
            try
            {
                job.OnServersLost(change.BecameUnreachable);
            }
            // a bug in one job's recovery fails that job on this server, never the server
            catch (Exception e)
            {
                FailJob(job, e);
            }
        }
        RebalanceWindows();
        Flush();
    }

    /// <summary>Routes changed (a link went down or up): streams move to the first hops of the new shortest paths.</summary>
    public void OnRoutesChanged()
    {
        foreach (var job in _jobs.Values)
        {
            if (job.Failure is null)
            {
                job.UpdatePorts();
            }
        }
        Flush();
    }

    /// <summary>After recovery work outside a frame or send-ready callback (a retry timer, a map task run again).</summary>
    internal void FlushAfterRecovery() => Flush();

    internal void FailJob(ServerJob job, string reason)
    {
        job.Fail(reason);
        Context.Log(LogLevel.Error, $"job {job.JobId:x16} failed on {Context.Self}: {job.Failure}");
        RebalanceWindows();
        JobFailed?.Invoke(job);
    }

    internal void OnReduceTaskCompleted(ServerJob job, ReduceTaskResult result)
    {
        ReduceTaskCompleted?.Invoke(result);
        OnJobProgress(job);
    }

    internal void OnJobProgress(ServerJob job)
    {
        if (job.IsFinished)
        {
            RebalanceWindows();
        }
    }

    private void FailJob(ServerJob job, Exception error) => FailJob(job, $"{error.GetType().Name}: {error.Message}");

    /// <summary>Splits the packet-buffer budget evenly over the inbound streams of the jobs still running here.</summary>
    private void RebalanceWindows()
    {
        long streams = 0;
        long budget = 0;
        foreach (var job in _jobs.Values)
        {
            if (job.IsFinished || job.Failure is not null)
            {
                continue;
            }
            streams += job.InboundStreams;
            budget = Math.Max(budget, job.Description.MemoryBudgetBytes);
        }
        Transport.SetBudget(budget > 0 ? budget : Options.MemoryBudgetBytes, streams);
    }
}
