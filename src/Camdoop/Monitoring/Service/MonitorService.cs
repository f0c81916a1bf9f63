using Camdoop.Monitoring.Control;
using Camdoop.Monitoring.Jobs;
using Camdoop.Monitoring.Metrics;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Storage;
using Camdoop.Monitoring.Tables;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Monitoring.Service;

/// <summary>
/// Runs monitoring queries on every server and merges their results over a tree to the server that asked (the HONE
/// paper's host agents and MergeHosts, on the CamCube's links). The asking server starts a round every interval: the
/// request travels down the query's <see cref="QueryTree"/>; each server reads its table, applies the query's
/// operators (<see cref="QueryPlan.Local"/>), waits for its children's results until its deadline, merges them with
/// its own (combining on path when the query allows) and sends the merged rows to its parent. Deadlines shrink with
/// depth, so a server deeper down gives up first and a missing subtree only makes the round incomplete. Its frames
/// go through the node's own queue for this service, fair-shared with every other service, so a query's bandwidth
/// is bounded by the round robin. Rate limits travel down the same trees (<see cref="Distribute"/>): each server
/// applies what covers it and passes the limit on to its children.
/// </summary>
public sealed class MonitorService : IService
{
    private readonly IJobSource? _jobs;
    private readonly IServerStatsSource? _stats;
    private readonly IStorageSource? _storage;
    private readonly IMetricSource? _metrics;
    private readonly Dictionary<(Coordinate Root, uint Query), CachedPlan> _plans = [];
    private readonly Dictionary<RoundId, PendingRound> _rounds = [];
    private readonly Dictionary<uint, RunningQuery> _asked = [];
    private readonly Queue<byte[]>[] _unsent = new Queue<byte[]>[Ports.Count];
    private readonly List<QueryValue[]> _scratch = [];
    private INodeContext? _context;
    private NodeTables? _tables;
    private uint _nextQuery;

    /// <summary>
    /// A monitoring service that reads and limits the server's MapReduce jobs through <paramref name="jobs"/> (null
    /// on a server that runs none), the process's costs through <paramref name="stats"/> (null where there are none),
    /// the chunk store through <paramref name="storage"/> (null on a server without one) and the metrics table
    /// through <paramref name="metrics"/> (null: the table has no rows here).
    /// </summary>
    public MonitorService(IJobSource? jobs, IServerStatsSource? stats = null, IStorageSource? storage = null, IMetricSource? metrics = null)
    {
        _jobs = jobs;
        _stats = stats;
        _storage = storage;
        _metrics = metrics;
        for (int p = 0; p < Ports.Count; p++)
        {
            _unsent[p] = new Queue<byte[]>();
        }
    }

    public byte Id => WellKnownServices.Monitoring;

    public string Name => "monitor";

    public MonitorCounters Counters { get; } = new();

    /// <summary>Queries this server is asking now.</summary>
    public int Running => _asked.Count;

    private INodeContext Context => _context ?? throw new InvalidOperationException("the monitoring service has not started");

    public void Start(INodeContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        _context = context;
        _tables = new NodeTables(context, _jobs, _stats, _storage, _metrics);
    }

    /// <summary>This server's table rows now, as a query sees them.</summary>
    public List<QueryValue[]> ReadTable(TableSchema table)
    {
        var rows = new List<QueryValue[]>();
        (_tables ?? throw new InvalidOperationException("the monitoring service has not started")).Read(table, rows);
        return rows;
    }

    /// <summary>
    /// Asks the whole cube <paramref name="query"/> from this server: a round starts now and then every interval
    /// (at most <paramref name="rounds"/>, 0 for no limit), and <paramref name="onRound"/> gets each round's result on
    /// the event loop. Returns the query's number for <see cref="Cancel"/>.
    /// </summary>
    public uint Ask(Query query, Action<QueryRound> onRound, int rounds = 0, bool combineOnPath = true)
    {
        ArgumentNullException.ThrowIfNull(query);
        ArgumentNullException.ThrowIfNull(onRound);
        ArgumentOutOfRangeException.ThrowIfNegative(rounds);
        var context = Context;
        uint number = ++_nextQuery;
        var running = new RunningQuery(number, new QueryPlan(query, combineOnPath), onRound, rounds);
        _asked.Add(number, running);
        _plans[(context.Self, number)] = new CachedPlan(running.Plan, context.Now);
        StartRound(running);
        return number;
    }

    /// <summary>Stops asking a query; rounds in flight are dropped when they finish.</summary>
    public void Cancel(uint query)
    {
        if (_asked.Remove(query, out var running) && running.Timer is { } timer)
        {
            Context.CancelTimer(timer);
        }
    }

    public void OnFrame(in InboundFrame frame)
    {
        var payload = frame.Payload;
        switch (MonitorWire.KindOf(payload))
        {
            case MonitorWire.KindRequest:
                OnRequest(payload, frame.ArrivalPort);
                break;
            case MonitorWire.KindResult:
                OnResult(payload, frame.ArrivalPort);
                break;
            case RateLimitWire.Kind:
                OnLimit(payload, frame.ArrivalPort);
                break;
            default:
                Counters.Malformed++;
                break;
        }
    }

    public void OnSendReady(Port port) => Flush(port);

    public void OnLinkChanged(Port port, bool up)
    {
        if (!up)
        {
            Counters.Dropped += _unsent[(int)port].Count;
            _unsent[(int)port].Clear();
        }
    }

    public void Stop()
    {
        foreach (var running in _asked.Values)
        {
            if (running.Timer is { } timer)
            {
                Context.CancelTimer(timer);
            }
        }
        _asked.Clear();
        foreach (var round in _rounds.Values)
        {
            Context.CancelTimer(round.Deadline);
        }
        _rounds.Clear();
    }

    /// <summary>
    /// Sets (or lifts) <paramref name="limit"/> on every server it covers: here at once, elsewhere as the message
    /// reaches it down this server's tree. A query asked from here afterwards reaches each server after the limit,
    /// on the same links and queues, so it sees the limit applied.
    /// </summary>
    public void Distribute(RateLimit limit)
    {
        ArgumentNullException.ThrowIfNull(limit);
        limit.Check();
        var context = Context;
        var payload = RateLimitWire.Write(context.Self, limit);
        ApplyAndPassOn(limit, payload, context.Self);
    }

    private void OnLimit(ReadOnlySpan<byte> payload, Port arrival)
    {
        var context = Context;
        if (!RateLimitWire.TryRead(payload, context.Torus, out var root, out var limit)
            || root == context.Self || QueryTree.ParentPort(context.Torus, context.Self, root) != arrival)
        {
            Counters.Malformed++;
            return;
        }
        ApplyAndPassOn(limit!, payload.ToArray(), root);
    }

    private void ApplyAndPassOn(RateLimit limit, byte[] payload, Coordinate root)
    {
        var context = Context;
        int children = QueryTree.ChildPorts(context.Torus, context.Self, root);
        foreach (var port in Ports.All)
        {
            if ((children & (1 << (int)port)) != 0 && context.IsLinkUp(port))
            {
                Send(port, payload, queueIfFull: true);
            }
        }
        if (RateLimits.Apply(context, _jobs, limit))
        {
            Counters.LimitsApplied++;
        }
    }

    private void StartRound(RunningQuery running)
    {
        var context = Context;
        long round = ++running.Rounds;
        long interval = running.Plan.Query.IntervalNs;
        // Results must be back before the next round starts; deeper servers give up earlier (see Deadline).
        long budget = Math.Min(interval * 8 / 10, 2000 * NodeOptions.Millisecond);
        Begin(new RoundId(context.Self, running.Number, round), running.Plan, budget, parent: null);
        if (running.MaxRounds == 0 || round < running.MaxRounds)
        {
            running.Timer = context.SetTimer(interval, () =>
            {
                if (_asked.ContainsKey(running.Number))
                {
                    StartRound(running);
                }
            });
        }
    }

    private void OnRequest(ReadOnlySpan<byte> payload, Port arrival)
    {
        var context = Context;
        if (!MonitorWire.TryReadRequest(payload, context.Torus, out var id, out bool combine, out long budget, out string text)
            || QueryTree.ParentPort(context.Torus, context.Self, id.Root) != arrival)
        {
            Counters.Malformed++;
            return;
        }
        if (_rounds.ContainsKey(id))
        {
            return;
        }
        var key = (id.Root, id.Query);
        if (!_plans.TryGetValue(key, out var cached))
        {
            try
            {
                cached = new CachedPlan(new QueryPlan(QueryParser.Parse(text), combine), context.Now);
            }
            catch (QueryException)
            {
                // The asking server parsed it: a query that does not parse here was damaged or forged.
                Counters.Malformed++;
                return;
            }
            PrunePlans();
            _plans[key] = cached;
        }
        cached.LastUsed = context.Now;
        Begin(id, cached.Plan, budget, arrival);
    }

    /// <summary>Starts this server's part of a round: passes the request on, reads its own table, waits for its children.</summary>
    private void Begin(RoundId id, QueryPlan plan, long budget, Port? parent)
    {
        var context = Context;
        Counters.Rounds++;
        int children = QueryTree.ChildPorts(context.Torus, context.Self, id.Root);
        byte[]? request = null;
        int expected = 0;
        foreach (var port in Ports.All)
        {
            if ((children & (1 << (int)port)) == 0 || !context.IsLinkUp(port))
            {
                continue;
            }
            request ??= MonitorWire.Request(id, plan.CombineOnPath, budget, plan.Query.Text);
            if (Send(port, request, queueIfFull: false))
            {
                expected |= 1 << (int)port;
            }
        }
        _scratch.Clear();
        _tables!.Read(plan.Query.Table, _scratch);
        var round = new PendingRound(id, plan, parent, expected, context.Now, plan.Local(_scratch));
        _scratch.Clear();
        if (expected == 0)
        {
            Complete(round);
            return;
        }
        round.Deadline = context.SetTimer(Deadline(id.Root, budget), () =>
        {
            if (_rounds.Remove(id, out var late))
            {
                Counters.Incomplete++;
                Complete(late);
            }
        });
        _rounds.Add(id, round);
    }

    /// <summary>How long a server waits for its children: the budget's share of the levels below it.</summary>
    private long Deadline(Coordinate root, long budget)
    {
        var context = Context;
        int height = Math.Max(1, QueryTree.Height(context.Torus));
        int depth = context.Torus.Distance(context.Self, root);
        return Math.Max(1, budget * Math.Max(1, height - depth) / height);
    }

    private void OnResult(ReadOnlySpan<byte> payload, Port arrival)
    {
        var context = Context;
        if (payload.Length < MonitorWire.ResultHeaderSize)
        {
            Counters.Malformed++;
            return;
        }
        Counters.ResultFramesReceived++;
        Counters.ResultBytesReceived += payload.Length;
        // The width of a row depends on the query: read the id first.
        if (!MonitorWire.TryReadResultId(payload, context.Torus, out var id))
        {
            Counters.Malformed++;
            return;
        }
        if (!_rounds.TryGetValue(id, out var round) || (round.Expected & (1 << (int)arrival)) == 0)
        {
            Counters.LateResults++;
            return;
        }
        var rows = new List<QueryValue[]>();
        if (!MonitorWire.TryReadResult(payload, context.Torus, round.Plan.PartialWidth, out _, out int servers, out bool last, rows))
        {
            Counters.Malformed++;
            return;
        }
        round.Rows = round.Plan.Merge(round.Rows, rows);
        if (!last)
        {
            return;
        }
        round.Servers += servers;
        round.Expected &= ~(1 << (int)arrival);
        if (round.Expected == 0)
        {
            _rounds.Remove(id);
            context.CancelTimer(round.Deadline);
            Complete(round);
        }
    }

    /// <summary>Sends a finished round on to the parent, or hands it to the query's asker at the root.</summary>
    private void Complete(PendingRound round)
    {
        var context = Context;
        if (round.Parent is not { } parent)
        {
            if (_asked.TryGetValue(round.Id.Query, out var running))
            {
                var plan = round.Plan;
                running.OnRound(new QueryRound(round.Id.Round, [.. plan.Query.Headings], plan.Finish(round.Rows), round.Servers, context.Torus.Count, round.StartedAt, context.Now));
                if (running.MaxRounds > 0 && round.Id.Round >= running.MaxRounds)
                {
                    _asked.Remove(round.Id.Query);
                }
            }
            return;
        }
        if (!context.IsLinkUp(parent))
        {
            Counters.Dropped++;
            return;
        }
        foreach (var payload in MonitorWire.Results(round.Id, round.Servers, round.Rows))
        {
            Send(parent, payload, queueIfFull: true);
        }
    }

    /// <summary>Queues a message on a port; when the queue is full it waits here for room (results) or is refused (requests).</summary>
    private bool Send(Port port, byte[] payload, bool queueIfFull)
    {
        var unsent = _unsent[(int)port];
        if (unsent.Count > 0)
        {
            if (!queueIfFull)
            {
                return false;
            }
            unsent.Enqueue(payload);
            return true;
        }
        if (TrySend(port, payload))
        {
            return true;
        }
        if (queueIfFull)
        {
            unsent.Enqueue(payload);
            Context.RequestSendReady(Id, port);
            return true;
        }
        return false;
    }

    private bool TrySend(Port port, byte[] payload)
    {
        var context = Context;
        var header = new FrameHeader(Id, context.Self, context.Torus.Neighbour(context.Self, port));
        var status = context.TrySend(port, ref header, default, payload);
        if (status == SendStatus.Queued && payload[0] == MonitorWire.KindResult)
        {
            Counters.ResultFramesSent++;
            Counters.ResultBytesSent += payload.Length;
        }
        return status == SendStatus.Queued;
    }

    private void Flush(Port port)
    {
        var unsent = _unsent[(int)port];
        while (unsent.Count > 0 && TrySend(port, unsent.Peek()))
        {
            unsent.Dequeue();
        }
        if (unsent.Count > 0)
        {
            Context.RequestSendReady(Id, port);
        }
    }

    /// <summary>Forgets plans of queries no round has used for a minute (their asker stopped or failed).</summary>
    private void PrunePlans()
    {
        long now = Context.Now;
        foreach (var (key, cached) in _plans)
        {
            if (now - cached.LastUsed > 60_000 * NodeOptions.Millisecond && !(key.Root == Context.Self && _asked.ContainsKey(key.Query)))
            {
                _plans.Remove(key);
            }
        }
    }

    private sealed class CachedPlan(QueryPlan plan, long lastUsed)
    {
        public QueryPlan Plan { get; } = plan;

        public long LastUsed { get; set; } = lastUsed;
    }

    private sealed class RunningQuery(uint number, QueryPlan plan, Action<QueryRound> onRound, int maxRounds)
    {
        public uint Number { get; } = number;

        public QueryPlan Plan { get; } = plan;

        public Action<QueryRound> OnRound { get; } = onRound;

        public int MaxRounds { get; } = maxRounds;

        public long Rounds { get; set; }

        public TimerHandle? Timer { get; set; }
    }

    private sealed class PendingRound(RoundId id, QueryPlan plan, Port? parent, int expected, long startedAt, List<QueryValue[]> rows)
    {
        public RoundId Id { get; } = id;

        public QueryPlan Plan { get; } = plan;

        public Port? Parent { get; } = parent;

        /// <summary>Child ports whose last result has not arrived.</summary>
        public int Expected { get; set; } = expected;

        public long StartedAt { get; } = startedAt;

        public List<QueryValue[]> Rows { get; set; } = rows;

        /// <summary>Servers the rows cover: this one and every subtree that answered.</summary>
        public int Servers { get; set; } = 1;

        public TimerHandle Deadline { get; set; }
    }
}
