using System.Diagnostics;
using Camdoop.Monitoring.Metrics;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;

namespace Camdoop.FrontEnd;

/// <summary>One exposition of the whole cube: its text, the servers that answered of the cube's, the round's merge time.</summary>
public sealed record CubeExposition(string Text, int Servers, int ServersInCube, long MergeNs);

/// <summary>
/// The whole cube's metrics as the front-end's server gathers them: one round of the ungrouped query of the metrics
/// table through the monitoring service (the web view's way to every server's numbers, merged over the cube's own
/// links), formatted as a Prometheus exposition with every series labelled by its server. Scrapes share rounds: one
/// asked while a round is under way waits for that round, and a round finished less than <see cref="Reuse"/> ago is
/// served again, so however many scrapers and clients ask, the cube runs at most one such round a second.
/// </summary>
public sealed class CubeMetrics
{
    /// <summary>The query behind every exposition; its interval only sets the round's budget (2 s, the most a round gets).</summary>
    public const string QueryText = "select server, metric, label, value from metrics every 3s";

    /// <summary>The front-end's own series, first in the exposition: how complete and how fresh it is.</summary>
    public static readonly IReadOnlyList<MetricDefinition> ScrapeMetrics =
    [
        new("camdoop_scrape_servers", MetricKind.Gauge, "1", "Servers whose series are in this exposition (the others' were missing from the round)"),
        new("camdoop_scrape_cube_servers", MetricKind.Gauge, "1", "Servers in the cube"),
        new("camdoop_scrape_merge_seconds", MetricKind.Gauge, "s", "Time from the round's start to its last result at the front-end's server"),
    ];

    private static readonly Query Query = QueryParser.Parse(QueryText);

    private readonly FrontEndNode _node;
    private readonly MonitorService _monitor;
    private readonly Lock _gate = new();
    private Task<CubeExposition>? _pending;
    private CubeExposition? _last;
    private long _lastAt;
    private long _rounds;

    public CubeMetrics(FrontEndNode node, MonitorService monitor, TimeSpan? reuse = null)
    {
        ArgumentNullException.ThrowIfNull(node);
        ArgumentNullException.ThrowIfNull(monitor);
        _node = node;
        _monitor = monitor;
        Reuse = reuse ?? TimeSpan.FromSeconds(1);
    }

    public TimeSpan Reuse { get; }

    /// <summary>Rounds asked of the cube for expositions.</summary>
    public long Rounds => Interlocked.Read(ref _rounds);

    /// <summary>The cube's exposition now, or as it was at most <see cref="Reuse"/> ago.</summary>
    public Task<CubeExposition> ScrapeAsync()
    {
        lock (_gate)
        {
            if (_pending is { } pending)
            {
                return pending;
            }
            if (_last is { } last && Stopwatch.GetElapsedTime(_lastAt) < Reuse)
            {
                return Task.FromResult(last);
            }
            _pending = AskAsync();
            return _pending;
        }
    }

    private async Task<CubeExposition> AskAsync()
    {
        // Off the caller's lock: the round's continuation may complete synchronously.
        await Task.Yield();
        try
        {
            Interlocked.Increment(ref _rounds);
            var round = await _node.Start<QueryRound>(done => _monitor.Ask(Query, done, rounds: 1)).ConfigureAwait(false);
            var exposition = Format(round);
            lock (_gate)
            {
                _last = exposition;
                _lastAt = Stopwatch.GetTimestamp();
            }
            return exposition;
        }
        finally
        {
            lock (_gate)
            {
                _pending = null;
            }
        }
    }

    /// <summary>The exposition of one round of <see cref="QueryText"/>.</summary>
    public static CubeExposition Format(QueryRound round)
    {
        ArgumentNullException.ThrowIfNull(round);
        var samples = new List<CubeSample>(round.Rows.Count + ScrapeMetrics.Count)
        {
            new("", ScrapeMetrics[0].Name, "", round.Servers),
            new("", ScrapeMetrics[1].Name, "", round.ServersInCube),
            new("", ScrapeMetrics[2].Name, "", round.LatencyNs / 1e9),
        };
        foreach (var row in round.Rows)
        {
            if (row is [{ IsText: true } server, { IsText: true } metric, { IsText: true } label, { IsNull: false, IsText: false } value])
            {
                samples.Add(new CubeSample(server.Text!, metric.Text!, label.Text!, value.Number));
            }
        }
        return new CubeExposition(PrometheusText.Format(samples, ScrapeMetrics), round.Servers, round.ServersInCube, round.LatencyNs);
    }
}
