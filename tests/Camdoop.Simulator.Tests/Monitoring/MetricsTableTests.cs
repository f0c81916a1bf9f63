using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Monitoring.Metrics;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;
using Camdoop.Monitoring.Tables;
using Camdoop.Records;
using Camdoop.Runtime.Topology;
using Camdoop.Server;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Tests.Shared;

namespace Camdoop.Simulator.Tests.Monitoring;

/// <summary>
/// The metrics table on a simulated 3x3x3 cube running every server's stack: one round of the ungrouped query
/// brings every server's series to the asking server, which formats them as a Prometheus exposition that a strict
/// reader accepts, with every server's series in it and each value as that server's own counters have it; the same
/// table grouped by metric is the cube's totals, combined on path.
/// </summary>
public sealed class MetricsTableTests : IDisposable
{
    private const long Ms = SimTime.Millisecond;
    private const int Chunks = 20;
    private static readonly Torus Cube = new(3, 3, 3);
    private static readonly Coordinate Root = new(0, 0, 0);

    private readonly string _data = Directory.CreateTempSubdirectory("camdoop-metrics-table-").FullName;

    public void Dispose() => Directory.Delete(_data, recursive: true);

    [Fact]
    public void OneRoundBringsEveryServersSeriesAndTheyFormatAsAStrictExposition()
    {
        using var sim = Start();
        var round = Ask(sim, "select server, metric, label, value from metrics every 1s");

        Assert.Equal(Cube.Count, round.Servers);
        var samples = round.Rows.Select(r => new CubeSample(r[0].Text!, r[1].Text!, r[2].Text!, r[3].Number)).ToList();
        var families = PrometheusExposition.Parse(PrometheusText.Format(samples));
        var byName = families.ToDictionary(f => f.Name);

        // Every server has the same series, and every metric the catalog has for a simulated server.
        var perServer = samples.GroupBy(s => s.Server).ToDictionary(g => g.Key, g => g.Select(s => (s.Metric, s.Label)).Order().ToList());
        Assert.Equal(Cube.All().Select(c => c.Name).Order(), perServer.Keys.Order());
        var first = perServer.Values.First();
        Assert.All(perServer.Values, series => Assert.Equal(first, series));
        Assert.True(first.Count > 150, $"only {first.Count} series per server");
        foreach (var family in families)
        {
            var metric = MetricCatalog.Find(family.Name)!;
            Assert.Equal(metric.Kind == MetricKind.Counter ? "counter" : "gauge", family.Type);
            Assert.Equal(metric.Help, family.Help);
            Assert.Equal(Cube.Count, family.Samples.Select(s => s.Label("server")).Distinct().Count());
        }
        foreach (var port in new[] { "sent", "received" })
        {
            var bytes = byName[$"camdoop_link_{port}_bytes_total"].Samples;
            Assert.Equal(Cube.Count * 6, bytes.Count);
            Assert.Equal(Ports.All.ToArray().Select(p => p.Name()).Order(), bytes.Where(s => s.Label("server") == "1,1,1").Select(s => s.Label("port")).Order());
            Assert.All(bytes, s => Assert.True(s.Value > 0, $"{s.Label("server")} {s.Label("port")}: no bytes {port}"));
        }
        Assert.All(byName["camdoop_link_up"].Samples, s => Assert.Equal(1, s.Value));
        Assert.All(byName["camdoop_links_up"].Samples, s => Assert.Equal(6, s.Value));
        Assert.All(byName["camdoop_reachable_servers"].Samples, s => Assert.Equal(Cube.Count, s.Value));
        Assert.Equal(FrameReasons.Order(), byName["camdoop_node_frames_rejected_by_reason_total"].Samples.Where(s => s.Label("server") == "0,0,0").Select(s => s.Label("reason")).Order());

        // The known traffic: each chunk written once and kept on three servers. Counters that stand still since
        // the writes are each server's own exactly; link counters only grow (beacons flow), so the round's are at
        // most what the server counts now.
        Assert.Equal(3 * Chunks, byName["camdoop_chunk_store_replicas"].Samples.Sum(s => s.Value));
        foreach (var server in Cube.All())
        {
            var host = sim.Host(server);
            var store = host.GetService<ChunkStoreService>()!;
            double Value(string metric, string label = "") => samples.Single(s => s.Server == server.Name && s.Metric == metric && s.Label == label).Value;
            Assert.Equal(store.Local.Count, Value("camdoop_chunk_store_replicas"));
            Assert.Equal(store.Local.BytesStored, Value("camdoop_chunk_store_stored_bytes"));
            Assert.Equal(store.Counters.ReplicasStored, Value("camdoop_chunk_store_replicas_stored_total"));
            Assert.Equal(host.GetService<KeyRoutingService>()!.Counters.Recomputations, Value("camdoop_routing_recomputations_total"));
            foreach (var port in Ports.All)
            {
                double sent = Value("camdoop_link_frames_sent_total", port.Name());
                Assert.InRange(sent, 1, host.Counters.FramesSent[(int)port]);
            }
        }
    }

    [Fact]
    public void GroupedByMetricTheTableIsTheCubesTotalsCombinedOnPath()
    {
        using var sim = Start();
        var round = Ask(sim, "select metric, sum(value) as total, count(*) as servers from metrics where metric = 'camdoop_chunk_store_replicas' or metric = 'camdoop_links_up' group by metric every 1s");

        Assert.Equal(Cube.Count, round.Servers);
        var totals = round.Rows.ToDictionary(r => r[0].Text!, r => (Total: r[1].Number, Servers: r[2].Number));
        Assert.Equal((3.0 * Chunks, 27.0), totals["camdoop_chunk_store_replicas"]);
        Assert.Equal((6.0 * 27, 27.0), totals["camdoop_links_up"]);
        // Combined on path: the root's children sent it one row per metric each, not one per server.
        var monitor = sim.Host(Root).GetService<MonitorService>()!;
        Assert.True(monitor.Counters.ResultBytesReceived < 1000, $"{monitor.Counters.ResultBytesReceived} bytes of results reached the root");
    }

    [Fact]
    public void EveryCounterOfAServerIsAMetric()
    {
        using var sim = Start();
        foreach (var server in new[] { Root, new Coordinate(2, 1, 0) })
        {
            var host = sim.Host(server);
            foreach (var (group, counters) in ServerCounters.Read(host))
            {
                Assert.All(counters.Keys, key => Assert.True(MetricCatalog.TryMap(group, key, out _, out _), $"status.json counter {group}.{key} is no metric"));
            }
            Assert.All(ServerCounters.Port(host, Port.XPlus).Keys, key => Assert.True(MetricCatalog.TryMap("link", key, out _, out _), $"link field {key} is no metric"));
            var rows = host.GetService<MonitorService>()!.ReadTable(MonitorTables.Metrics);
            Assert.Equal(["server", "metric", "label", "value"], MonitorTables.Metrics.Columns.Select(c => c.Name));
            Assert.All(rows, r => Assert.Equal(server.Name, r[0].Text));
            Assert.Equal(rows.Count, rows.Select(r => (r[1].Text, r[2].Text)).Distinct().Count());
        }
    }

    /// <summary>Every reason a frame is rejected for (FrameError but None), as the reason label spells it.</summary>
    private static readonly string[] FrameReasons =
        ["truncated", "wrong_ether_type", "wrong_version", "bad_length", "oversize", "bad_flags", "bad_coordinate", "unknown_service", "ttl_expired"];

    private Simulation Start()
    {
        var sim = new Simulation(
            new SimulationOptions { Torus = Cube, Seed = 11, DataRoot = _data, Node = SimulationOptions.DefaultNodeOptions with { BeaconInterval = 50 * Ms } },
            host => ServerStack.OnTorus(host));
        sim.Start();
        for (int i = 0; i < Chunks; i++)
        {
            var bytes = new byte[5_000 + (i * 17)];
            new Random(i).NextBytes(bytes);
            var meta = new ChunkMeta
            {
                Id = ChunkPlacement.ChunkId(Cube, "measured", i, nonce: 5),
                Length = bytes.Length,
                Checksum = XxHash64.Hash(bytes),
                Dataset = "measured",
                Index = i,
                Count = Chunks,
                DatasetBytes = bytes.Length,
            };
            WriteResult? written = null;
            sim.Host(Cube.CoordinateOf(i % Cube.Count)).GetService<ChunkStoreService>()!.Write(meta, bytes, r => written = r);
            Assert.True(sim.RunUntil(() => written is not null, sim.Now + (60_000 * Ms)), "the write did not finish");
            Assert.True(written!.Ok, written.Error);
        }
        sim.RunUntil(sim.Now + (500 * Ms));
        return sim;
    }

    private static QueryRound Ask(Simulation sim, string text)
    {
        QueryRound? round = null;
        sim.Schedule(sim.Now + Ms, () => sim.Host(Root).GetService<MonitorService>()!.Ask(QueryParser.Parse(text), r => round = r, rounds: 1));
        Assert.True(sim.RunUntil(() => round is not null, sim.Now + (2_000 * Ms)), "no round");
        return round!;
    }
}
