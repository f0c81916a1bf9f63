using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.FrontEnd.Jobs;

/// <summary>Tunables of job control. Times in nanoseconds.</summary>
public sealed record JobControlOptions
{
    /// <summary>How long an unacknowledged control message waits before it is sent again.</summary>
    public long RetryInterval { get; init; } = 300 * NodeOptions.Millisecond;

    /// <summary>Sends of one control message before its destination is given up.</summary>
    public int MaxAttempts { get; init; } = 60;

    /// <summary>How often a shuffling server reports its progress to the coordinator.</summary>
    public long ProgressInterval { get; init; } = 250 * NodeOptions.Millisecond;

    /// <summary>The coordinator fails a job when no server has reported anything for this long.</summary>
    public long StallTimeout { get; init; } = 180_000 * NodeOptions.Millisecond;

    /// <summary>Sort buffer of each map task.</summary>
    public long MapSortBufferBytes { get; init; } = 64L * 1024 * 1024;

    /// <summary>
    /// Which jobs this server runs, and checks as a coordinator: built-ins only unless the node's config allows a
    /// job assembly directory.
    /// </summary>
    public JobCatalog Jobs { get; init; } = JobCatalog.BuiltInOnly;

    /// <summary>
    /// This server's byte streams to the others over a switch network, for TCP Camdoop jobs (mode tcp); null: none,
    /// and such jobs fail here with a clear reason.
    /// </summary>
    public IStreamTransport? Streams { get; init; }
}

/// <summary>
/// Job control (the Camdoop paper, §4): the front-end that receives a job broadcasts it over the torus to every server; each
/// server maps the input chunks it is the primary replica of (fetching a good copy first when its own is missing or
/// corrupt), reports, and when every server has mapped the coordinator starts the shuffle everywhere at once (the
/// paper's synchronous start by an explicit message). The shuffle and reduce are the Camdoop service's; this service
/// reports their progress and completion back, stores reduce outputs in the chunk store when asked (the reducer as
/// primary replica), and cleans up when the job is over. Control messages are acknowledged and retried.
/// One instance per server plays both roles: coordinator of the jobs submitted to its front-end, worker of all jobs.
/// </summary>
public sealed partial class JobControlService : IService
{
    private readonly Dictionary<(int Dest, JobMessage Kind, ulong Job, int Extra), PendingMessage> _pending = [];
    private readonly byte[] _frame = new byte[JobControlWire.MaxPayload];
    private INodeContext? _context;
    private KeyRoutingService? _routing;
    private ChunkStoreService? _store;
    private CamdoopService? _camdoop;
    private DirectShuffleService? _direct;
    private bool _stopped;

    public JobControlService(JobControlOptions? options = null)
    {
        Options = options ?? new JobControlOptions();
    }

    /// <summary>Registers job control on <paramref name="host"/> (after key routing, the chunk store and Camdoop).</summary>
    public static JobControlService Install(NodeHost host, JobControlOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(host);
        var service = new JobControlService(options);
        host.Register(service);
        return service;
    }

    public byte Id => WellKnownServices.JobControl;

    public string Name => "job-control";

    public JobControlOptions Options { get; }

    public long MalformedFrames { get; private set; }

    public long GaveUpMessages { get; private set; }

    internal INodeContext Context => _context ?? throw new InvalidOperationException("job control has not started");

    internal ChunkStoreService Store => _store!;

    internal CamdoopService Camdoop => _camdoop!;

    /// <summary>
    /// Runs this server's part of TCP Camdoop jobs (mode tcp) over <see cref="JobControlOptions.Streams"/>; null on a
    /// server with none (no uplink to a switch), which then fails such a job with a clear reason.
    /// </summary>
    public DirectShuffleService? Direct => _direct;

    public void Start(INodeContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        _context = context;
        _routing = context.GetService<KeyRoutingService>() ?? throw new InvalidOperationException("job control needs the key-routing service");
        _store = context.GetService<ChunkStoreService>() ?? throw new InvalidOperationException("job control needs the chunk store");
        _camdoop = context.GetService<CamdoopService>() ?? throw new InvalidOperationException("job control needs the Camdoop service");
        _camdoop.ReduceTaskCompleted += OnReduceTaskCompleted;
        _camdoop.JobFailed += OnCamdoopJobFailed;
        if (Options.Streams is { } streams)
        {
            _direct = new DirectShuffleService(context, streams);
            _direct.ReduceTaskCompleted += OnReduceTaskCompleted;
            _direct.JobFailed += OnDirectJobFailed;
        }
        // After the Camdoop service's listener (it started first): the shuffle has taken the loss in when job control hears of it.
        _routing.AddOwnershipListener(this);
    }

    public void Stop()
    {
        _stopped = true;
        foreach (var p in _pending.Values)
        {
            Context.CancelTimer(p.Timer);
        }
        _pending.Clear();
        foreach (var work in _work.Values)
        {
            work.DisposeMapOutputs();
        }
    }

    public void OnFrame(in InboundFrame frame)
    {
        var payload = frame.Payload;
        if (!JobControlWire.TryReadHeader(payload, out var kind, out ulong jobId))
        {
            MalformedFrames++;
            return;
        }
        var from = frame.Header.Source;
        bool ok = kind switch
        {
            JobMessage.Start => OnStart(from, jobId, payload),
            JobMessage.Shuffle => OnShuffle(from, jobId),
            JobMessage.End => OnEnd(from, jobId, payload),
            JobMessage.MapDone => OnMapDone(from, jobId, payload),
            JobMessage.Progress => OnProgress(from, jobId, payload),
            JobMessage.ReduceDone => OnReduceDone(from, jobId, payload),
            JobMessage.Failed => OnFailed(from, jobId, payload),
            JobMessage.Ack => OnAck(from, jobId, payload),
            _ => false,
        };
        if (!ok)
        {
            MalformedFrames++;
        }
    }

    // ---------------------------------------------------------------- reliable control messages

    /// <summary>Sends a message until the destination acknowledges it; <paramref name="onGiveUp"/> runs if it never does.</summary>
    private void SendReliable(Coordinate dest, JobMessage kind, ulong jobId, int extra, byte[] payload, Action? onGiveUp = null)
    {
        var key = (Context.Torus.IndexOf(dest), kind, jobId, extra);
        if (_pending.Remove(key, out var old))
        {
            Context.CancelTimer(old.Timer);
        }
        var pending = new PendingMessage(dest, payload, onGiveUp);
        _pending[key] = pending;
        Transmit(pending, key);
    }

    /// <summary>Stops retrying the messages of these kinds to <paramref name="dest"/> for the job.</summary>
    private void CancelPending(Coordinate dest, ulong jobId, params JobMessage[] kinds)
    {
        int index = Context.Torus.IndexOf(dest);
        foreach (var kind in kinds)
        {
            if (_pending.Remove((index, kind, jobId, 0), out var pending))
            {
                Context.CancelTimer(pending.Timer);
            }
        }
    }

    private void Transmit(PendingMessage pending, (int, JobMessage, ulong, int) key)
    {
        pending.Attempts++;
        Send(pending.Dest, pending.Payload);
        pending.Timer = Context.SetTimer(Options.RetryInterval, () =>
        {
            if (!_pending.TryGetValue(key, out var current) || !ReferenceEquals(current, pending) || _stopped)
            {
                return;
            }
            if (pending.Attempts >= Options.MaxAttempts)
            {
                _pending.Remove(key);
                GaveUpMessages++;
                Context.Log(LogLevel.Warning, $"job control: {key.Item2} for job {key.Item3:x16} never acknowledged by {pending.Dest.Name}");
                pending.OnGiveUp?.Invoke();
                return;
            }
            Transmit(pending, key);
        });
    }

    /// <summary>Acknowledges a message; an End is acknowledged with the server's final count of bytes shuffled.</summary>
    private void SendAck(Coordinate dest, JobMessage kind, ulong jobId, int extra, WorkerTotals? totals = null)
    {
        var w = JobControlWire.Begin(_frame, JobMessage.Ack, jobId);
        w.U8((byte)kind);
        w.U32((uint)extra);
        totals?.Write(ref w);
        Send(dest, _frame.AsSpan(0, w.Length));
    }

    private bool OnAck(Coordinate from, ulong jobId, ReadOnlySpan<byte> payload)
    {
        var r = JobControlWire.Body(payload);
        var kind = (JobMessage)r.U8();
        int extra = (int)r.U32();
        WorkerTotals? totals = r.AtEnd ? null : WorkerTotals.Read(ref r);
        if (!r.Ok || !r.AtEnd)
        {
            return false;
        }
        if (_pending.Remove((Context.Torus.IndexOf(from), kind, jobId, extra), out var pending))
        {
            Context.CancelTimer(pending.Timer);
            if (kind == JobMessage.End)
            {
                OnEndAcknowledged(from, jobId, totals);
            }
        }
        return true;
    }

    private void Send(Coordinate dest, ReadOnlySpan<byte> payload)
    {
        // Losses (a full queue, no route for a moment) are covered by the retries of the reliable messages.
        _routing!.RouteTo(Id, dest, payload, out _);
    }

    private sealed class PendingMessage(Coordinate dest, byte[] payload, Action? onGiveUp)
    {
        public Coordinate Dest { get; } = dest;

        public byte[] Payload { get; } = payload;

        public Action? OnGiveUp { get; } = onGiveUp;

        public int Attempts { get; set; }

        public TimerHandle Timer { get; set; }
    }
}
