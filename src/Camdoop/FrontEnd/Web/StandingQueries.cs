using Camdoop.FrontEnd.Wire;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;

namespace Camdoop.FrontEnd.Web;

/// <summary>A query's two latest rounds (the older one to turn counters into rates); either may be null at first.</summary>
public sealed record RoundPair(QueryRound? Previous, QueryRound? Latest)
{
    public static readonly RoundPair Empty = new(null, null);
}

/// <summary>
/// The monitoring queries the web view keeps asking the cube from this server, one per distinct text, for as long
/// as pages poll them: a query starts on its first poll (through the monitoring service, like `camdoop query`) and
/// is cancelled once no page has polled it for <see cref="IdleAfter"/>. At most <see cref="MaxQueries"/> run at
/// once; a new one evicts the one polled least recently, so pages cannot make the cube run queries without bound.
/// Each round's result is kept as it arrives on the event loop; readers take the latest pair without locking the loop.
/// </summary>
public sealed class StandingQueries : IDisposable
{
    private readonly FrontEndNode _node;
    private readonly MonitorService _monitor;
    private readonly Lock _lock = new();
    private readonly Dictionary<string, Standing> _queries = new(StringComparer.Ordinal);
    private readonly Timer _sweep;

    public StandingQueries(FrontEndNode node, TimeSpan? idleAfter = null, int maxQueries = 8)
    {
        ArgumentNullException.ThrowIfNull(node);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxQueries);
        _node = node;
        _monitor = node.Monitor ?? throw new FrontEndException($"server {node.Loop.Host.Self} does not run the monitoring service");
        IdleAfter = idleAfter ?? TimeSpan.FromSeconds(15);
        MaxQueries = maxQueries;
        _sweep = new Timer(_ => Sweep(), null, IdleAfter / 3, IdleAfter / 3);
    }

    public TimeSpan IdleAfter { get; }

    public int MaxQueries { get; }

    /// <summary>Queries asked now.</summary>
    public int Count
    {
        get
        {
            lock (_lock)
            {
                return _queries.Count;
            }
        }
    }

    /// <summary>
    /// The latest rounds of <paramref name="text"/>, starting the query when it is not running. Throws
    /// <see cref="QueryException"/> for a query that does not parse (nothing runs) and
    /// <see cref="FrontEndException"/> when the server is stopping.
    /// </summary>
    public async Task<RoundPair> PollAsync(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var query = QueryParser.Parse(text);
        Standing standing;
        Standing? evicted = null;
        bool start = false;
        lock (_lock)
        {
            if (!_queries.TryGetValue(query.Text, out standing!))
            {
                if (_queries.Count >= MaxQueries)
                {
                    evicted = _queries.Values.MinBy(q => q.LastPolled)!;
                    _queries.Remove(evicted.Query.Text);
                }
                standing = new Standing(query);
                _queries.Add(query.Text, standing);
                start = true;
            }
            standing.LastPolled = Environment.TickCount64;
        }
        if (evicted is not null)
        {
            Cancel(evicted);
        }
        if (start)
        {
            uint number;
            try
            {
                number = await _node.OnLoop(() => _monitor.Ask(query, round => standing.Rounds = new RoundPair(standing.Rounds.Latest, round))).ConfigureAwait(false);
            }
            catch
            {
                // Not started: the next poll tries again rather than waiting on a query that never runs.
                lock (_lock)
                {
                    if (_queries.TryGetValue(query.Text, out var entry) && ReferenceEquals(entry, standing))
                    {
                        _queries.Remove(query.Text);
                    }
                }
                throw;
            }
            bool cancelled;
            lock (_lock)
            {
                standing.Number = number;
                cancelled = standing.Cancelled;
            }
            if (cancelled)
            {
                Cancel(standing);
            }
        }
        return standing.Rounds;
    }

    public void Dispose()
    {
        _sweep.Dispose();
        List<Standing> all;
        lock (_lock)
        {
            all = [.. _queries.Values];
            _queries.Clear();
        }
        all.ForEach(Cancel);
    }

    private void Sweep()
    {
        long now = Environment.TickCount64;
        List<Standing> idle;
        lock (_lock)
        {
            idle = [.. _queries.Values.Where(q => now - q.LastPolled > (long)IdleAfter.TotalMilliseconds)];
            idle.ForEach(q => _queries.Remove(q.Query.Text));
        }
        idle.ForEach(Cancel);
    }

    /// <summary>Stops asking a query that is no longer in the table (or marks it, if its Ask has not returned yet).</summary>
    private void Cancel(Standing standing)
    {
        uint number;
        lock (_lock)
        {
            standing.Cancelled = true;
            number = standing.Number;
        }
        if (number == 0)
        {
            return;
        }
        try
        {
            _node.Loop.Post(() => _monitor.Cancel(number));
        }
        catch (InvalidOperationException)
        {
            // The server is stopping: its queries stop with it.
        }
    }

    private sealed class Standing(Query query)
    {
        private RoundPair _rounds = RoundPair.Empty;

        public Query Query { get; } = query;

        /// <summary>The monitoring service's number for the query; 0 until its Ask returns.</summary>
        public uint Number { get; set; }

        public bool Cancelled { get; set; }

        public long LastPolled { get; set; }

        /// <summary>Written on the event loop, read by request threads: swapped whole.</summary>
        public RoundPair Rounds
        {
            get => Volatile.Read(ref _rounds);
            set => Volatile.Write(ref _rounds, value);
        }
    }
}
