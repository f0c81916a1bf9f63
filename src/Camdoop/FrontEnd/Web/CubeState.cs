using Camdoop.Monitoring.Tables;
using Camdoop.Runtime.Topology;

namespace Camdoop.FrontEnd.Web;

/// <summary>
/// What /api/state returns: the cube's servers, links, jobs and storage as the web view's four standing queries last
/// saw them. Counters become rates over the time between a query's two latest rounds (the asking server's clock).
/// </summary>
public sealed record CubeState
{
    /// <summary>The cube-wide link query: one row per port of every server, counters cumulative.</summary>
    public const string LinksQuery = "select server, port, neighbour, up, bytes_sent, busy_ns from links every 1s";

    public const string ServersQuery = "select server, links_up, jobs_running, cpu_ms, memory_bytes from servers every 1s";

    /// <summary>
    /// Grouped, so servers combine a job's rows on the way up (one row per job and state reaches the front-end). The
    /// jobs table keeps each server's recent ended jobs, so a job stays on the page after its end.
    /// </summary>
    public const string JobsQuery =
        "select job, name, state, max(reduce_tasks) as reduce_tasks, sum(vertices) as vertices, sum(vertices_done) as vertices_done, " +
        "sum(reduce_tasks_done) as reduce_tasks_done, sum(bytes_in) as bytes_in, sum(bytes_out) as bytes_out, output, " +
        "sum(output_bytes) as output_bytes, min(started_ms) as started_ms, max(ended_ms) as ended_ms " +
        "from jobs group by job, name, state, output every 1s";

    /// <summary>
    /// Aggregated without groups, so servers combine it on the way up and one row reaches the front-end. Lost servers
    /// are the most any one server takes for lost: every live server counts the same lost ones, so a sum would not do.
    /// </summary>
    public const string StorageQuery =
        "select sum(replicas) as replicas, sum(bytes_stored) as bytes_stored, sum(copies_pending) as copies_pending, " +
        "sum(bytes_copied) as bytes_copied, max(servers_lost) as servers_lost, sum(corrupt_found) as corrupt_found, " +
        "sum(repaired) as repaired from storage every 1s";

    public required string Torus { get; init; }

    public required int[] Size { get; init; }

    /// <summary>The server asking the queries (this front-end's).</summary>
    public required string AskedFrom { get; init; }

    /// <summary>The link query's latest round number, 0 before the first one.</summary>
    public long Round { get; init; }

    /// <summary>Servers that answered the latest link round, of <see cref="ServersInCube"/>.</summary>
    public int Answered { get; init; }

    public int ServersInCube { get; init; }

    /// <summary>Time from the round's start to its last result at the asking server, in milliseconds.</summary>
    public double LatencyMs { get; init; }

    public double MaxBytesPerSecond { get; init; }

    public required IReadOnlyList<ServerLoad> Servers { get; init; }

    public required IReadOnlyList<LinkLoad> Links { get; init; }

    public required IReadOnlyList<JobProgress> Jobs { get; init; }

    public required StorageTotals Storage { get; init; }

    /// <summary>Builds the state from the four queries' rounds (any of which may have none yet).</summary>
    public static CubeState Build(Torus torus, Coordinate askedFrom, RoundPair links, RoundPair servers, RoundPair jobs, RoundPair storage)
    {
        ArgumentNullException.ThrowIfNull(torus);
        ArgumentNullException.ThrowIfNull(links);
        ArgumentNullException.ThrowIfNull(servers);
        ArgumentNullException.ThrowIfNull(jobs);
        ArgumentNullException.ThrowIfNull(storage);
        var linkLoads = LinkLoads(links);
        var sent = linkLoads.GroupBy(l => l.Server).ToDictionary(g => g.Key, g => g.Sum(l => l.BytesPerSecond), StringComparer.Ordinal);
        var serverRows = (servers.Latest?.Rows ?? []).ToDictionary(r => r[0].ToString(), StringComparer.Ordinal);
        var serverLoads = new List<ServerLoad>(torus.Count);
        foreach (var c in torus.All())
        {
            string name = c.Name;
            serverRows.TryGetValue(name, out var row);
            serverLoads.Add(new ServerLoad
            {
                Server = name,
                At = [c.X, c.Y, c.Z],
                Answered = row is not null,
                LinksUp = row is null ? 0 : (int)row[1].Number,
                JobsRunning = row is null ? 0 : (int)row[2].Number,
                CpuMs = row is null ? 0 : row[3].Number,
                MemoryBytes = row is null ? 0 : row[4].Number,
                BytesPerSecond = sent.GetValueOrDefault(name),
            });
        }
        var latest = links.Latest;
        return new CubeState
        {
            Torus = torus.ToString(),
            Size = [torus.SizeX, torus.SizeY, torus.SizeZ],
            AskedFrom = askedFrom.Name,
            Round = latest?.Round ?? 0,
            Answered = latest?.Servers ?? 0,
            ServersInCube = torus.Count,
            LatencyMs = latest is null ? 0 : latest.LatencyNs / 1e6,
            MaxBytesPerSecond = linkLoads.Count == 0 ? 0 : linkLoads.Max(l => l.BytesPerSecond),
            Servers = serverLoads,
            Links = linkLoads,
            Jobs = JobProgress.Merge(jobs.Latest?.Rows ?? []),
            Storage = StorageTotals.From(storage),
        };
    }

    /// <summary>Each link's bytes per second and busy fraction between the two rounds (0 with one round only).</summary>
    private static List<LinkLoad> LinkLoads(RoundPair links)
    {
        var loads = new List<LinkLoad>();
        if (links.Latest is not { } latest)
        {
            return loads;
        }
        var before = new Dictionary<(string, string), QueryValue[]>();
        double seconds = 0;
        if (links.Previous is { } previous && latest.StartedAt > previous.StartedAt)
        {
            seconds = (latest.StartedAt - previous.StartedAt) / 1e9;
            foreach (var row in previous.Rows)
            {
                before[(row[0].ToString(), row[1].ToString())] = row;
            }
        }
        foreach (var row in latest.Rows)
        {
            string server = row[0].ToString();
            string port = row[1].ToString();
            double rate = 0;
            double busy = 0;
            if (seconds > 0 && before.TryGetValue((server, port), out var old))
            {
                // A counter that went down belongs to a restarted server: no rate for this round.
                rate = Math.Max(0, row[4].Number - old[4].Number) / seconds;
                busy = Math.Clamp((row[5].Number - old[5].Number) / 1e9 / seconds, 0, 1);
            }
            loads.Add(new LinkLoad
            {
                Server = server,
                Port = port,
                Neighbour = row[2].ToString(),
                Up = row[3].Number != 0,
                BytesPerSecond = rate,
                Busy = busy,
            });
        }
        return loads;
    }
}

/// <summary>One server on the page.</summary>
public sealed record ServerLoad
{
    public required string Server { get; init; }

    public required int[] At { get; init; }

    /// <summary>False when the server's row was missing from the latest round (down or late).</summary>
    public bool Answered { get; init; }

    public int LinksUp { get; init; }

    public int JobsRunning { get; init; }

    public double CpuMs { get; init; }

    public double MemoryBytes { get; init; }

    /// <summary>Bytes per second the server sends on all its links.</summary>
    public double BytesPerSecond { get; init; }
}

/// <summary>One direction of one link: what <see cref="Server"/> sends on <see cref="Port"/>.</summary>
public sealed record LinkLoad
{
    public required string Server { get; init; }

    public required string Port { get; init; }

    public required string Neighbour { get; init; }

    public bool Up { get; init; }

    public double BytesPerSecond { get; init; }

    /// <summary>The fraction of the time frames waited for the link (the link was the bottleneck).</summary>
    public double Busy { get; init; }
}
