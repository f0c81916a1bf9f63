using System.Text.Json.Serialization;
using Camdoop.Monitoring.Jobs;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>One round of a monitoring query in a simulated run, at simulated times measured from the job's start.</summary>
public sealed record SimulatedQueryRound(
    [property: JsonPropertyName("round")] long Round,
    [property: JsonPropertyName("startedNs")] long StartedNs,
    [property: JsonPropertyName("latencyNs")] long LatencyNs,
    [property: JsonPropertyName("servers")] int Servers,
    [property: JsonPropertyName("rows")] IReadOnlyList<IReadOnlyList<string>> Rows);

/// <summary>A monitoring query asked during a simulated run, and every round of its result.</summary>
public sealed record SimulatedQueryResult(
    [property: JsonPropertyName("query")] string Query,
    [property: JsonPropertyName("from")] string From,
    [property: JsonPropertyName("columns")] IReadOnlyList<string> Columns,
    [property: JsonPropertyName("rounds")] IReadOnlyList<SimulatedQueryRound> Rounds);

/// <summary>
/// Monitoring queries in the simulator (`sim run --query`): every simulated server runs the same
/// <see cref="MonitorService"/> as a real one, and one server asks the queries from the job's start, over simulated
/// time, while the job runs and for one more round after it ends.
/// </summary>
public sealed class SimulatedQueries
{
    private readonly List<(Query Query, List<SimulatedQueryRound> Rounds)> _queries;
    private readonly Coordinate _from;
    private long _t0;

    public SimulatedQueries(IReadOnlyList<string> queries, Coordinate from)
    {
        ArgumentNullException.ThrowIfNull(queries);
        _queries = [.. queries.Select(q => (QueryParser.Parse(q), new List<SimulatedQueryRound>()))];
        _from = from;
    }

    /// <summary>Throws an <see cref="ArgumentException"/> with the parser's one-line message when a query cannot run.</summary>
    public static void Check(string query)
    {
        try
        {
            QueryParser.Parse(query);
        }
        catch (QueryException e)
        {
            throw new ArgumentException(e.Message, nameof(query), e);
        }
    }

    public bool Any => _queries.Count > 0;

    /// <summary>The longest interval: how long to run on after the job so that a last round lands.</summary>
    public long LongestInterval => _queries.Count == 0 ? 0 : _queries.Max(q => q.Query.IntervalNs);

    /// <summary>Registers the monitoring service on a simulated server, reading its jobs from <paramref name="jobs"/>.</summary>
    public void Install(NodeHost host, IJobSource jobs)
    {
        ArgumentNullException.ThrowIfNull(host);
        ArgumentNullException.ThrowIfNull(jobs);
        if (Any)
        {
            host.Register(new MonitorService(jobs));
        }
    }

    /// <summary>Starts asking every query at <paramref name="t0"/>.</summary>
    public void Start(Simulation sim, long t0)
    {
        ArgumentNullException.ThrowIfNull(sim);
        _t0 = t0;
        if (!Any)
        {
            return;
        }
        sim.Schedule(t0, () =>
        {
            var monitor = sim.Host(_from).GetService<MonitorService>()!;
            foreach (var (query, rounds) in _queries)
            {
                monitor.Ask(query, r =>
                {
                    lock (rounds)
                    {
                        rounds.Add(new SimulatedQueryRound(r.Round, r.StartedAt - _t0, r.LatencyNs, r.Servers, [.. r.Rows.Select(row => (IReadOnlyList<string>)[.. row.Select(v => v.ToString())])]));
                    }
                });
            }
        });
    }

    public IReadOnlyList<SimulatedQueryResult> Results() =>
        [.. _queries.Select(q => new SimulatedQueryResult(q.Query.Text, _from.Name, [.. q.Query.Headings], [.. q.Rounds.OrderBy(r => r.Round)]))];
}
