using System.Globalization;
using Camdoop.Experiments;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;
using Camdoop.Monitoring.Tables;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Monitoring;

/// <summary>Monitoring queries on a simulated cube, with the same service a real server runs.</summary>
public sealed class MonitorQueryTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    private static JobSimulationOptions WordCount(params string[] queries) => new()
    {
        Torus = Cube,
        Workload = Workload.WordCount,
        Settings = new SimulationSettings { BytesPerServer = 20_000, Verify = true },
        ReduceTasks = 3,
        Queries = queries,
        QueryFrom = new Coordinate(1, 1, 1),
        SimulationThreads = 1,
    };

    [Fact]
    public void EachTableReadsTheNodesOwnCounters()
    {
        var checkedServers = 0;
        var rootsDone = 0;
        double outputBytes = 0;
        // The jobs table, asked while the job ran: its servers drop the job when it ends, before the run is over,
        // and keep it among their recent ended jobs.
        var options = WordCount("select count(*) from links every 1ms", "select name, state, sum(reduce_tasks_done) from jobs group by name, state every 1ms");
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 400_000 },
            // A job of several rounds: every server drops it at its end, before the run is over.
            Workload = Workload.Synthetic,
            OutputRatio = 1,
            MapParallelism = 1,
            Inspect = (sim, services, _) =>
            {
                foreach (var server in Cube.All())
                {
                    var host = sim.Host(server);
                    var monitor = host.GetService<MonitorService>()!;
                    var links = monitor.ReadTable(MonitorTables.Links);
                    var queues = monitor.ReadTable(MonitorTables.Services);
                    var self = monitor.ReadTable(MonitorTables.Servers).Single();
                    var jobs = monitor.ReadTable(MonitorTables.Jobs);
                    Assert.Equal(Ports.Count, links.Count);
                    Assert.Equal(Ports.Count * host.Services.Count, queues.Count);
                    foreach (var port in Ports.All)
                    {
                        int p = (int)port;
                        var row = links.Single(r => r[Col(MonitorTables.Links, "port")].Text == port.Name());
                        Assert.Equal(server.Name, row[Col(MonitorTables.Links, "server")].Text);
                        Assert.Equal(Cube.Neighbour(server, port).Name, row[Col(MonitorTables.Links, "neighbour")].Text);
                        Assert.Equal(host.IsLinkUp(port) ? 1 : 0, row[Col(MonitorTables.Links, "up")].Number);
                        Assert.Equal(host.Counters.FramesSent[p], row[Col(MonitorTables.Links, "frames_sent")].Number);
                        Assert.Equal(host.Counters.BytesSent[p], row[Col(MonitorTables.Links, "bytes_sent")].Number);
                        Assert.Equal(host.Counters.FramesReceived[p], row[Col(MonitorTables.Links, "frames_received")].Number);
                        Assert.Equal(host.Counters.BytesReceived[p], row[Col(MonitorTables.Links, "bytes_received")].Number);
                        Assert.Equal(host.Counters.PortDrops[p], row[Col(MonitorTables.Links, "drops")].Number);
                        Assert.Equal(host.Counters.BacklogAt(port, host.Now), row[Col(MonitorTables.Links, "busy_ns")].Number);
                        // Counted at two places, per service queue and per port: they must agree.
                        var perService = queues.Where(r => r[Col(MonitorTables.Services, "port")].Text == port.Name()).ToList();
                        Assert.Equal(host.Counters.BytesSent[p], perService.Sum(r => r[Col(MonitorTables.Services, "bytes_sent")].Number));
                        Assert.Equal(host.Counters.FramesSent[p], perService.Sum(r => r[Col(MonitorTables.Services, "frames_sent")].Number));
                        Assert.Equal(perService.Sum(r => r[Col(MonitorTables.Services, "waiting")].Number), row[Col(MonitorTables.Links, "queue_depth")].Number);
                        foreach (var service in host.Services)
                        {
                            var q = host.QueueCounters(service.Id, port);
                            var r = perService.Single(r => r[Col(MonitorTables.Services, "service")].Text == service.Name);
                            Assert.Equal(service.Id, r[Col(MonitorTables.Services, "service_id")].Number);
                            Assert.Equal(q.FramesQueued, r[Col(MonitorTables.Services, "frames_queued")].Number);
                            Assert.Equal(q.BytesSent, r[Col(MonitorTables.Services, "bytes_sent")].Number);
                            // What a queue sent it admitted first; what it holds is the difference.
                            Assert.Equal(q.FramesQueued - q.FramesSent, q.Waiting);
                        }
                    }
                    Assert.Equal(host.Counters.FramesForwarded, self[Col(MonitorTables.Servers, "frames_forwarded")].Number);
                    Assert.Equal(host.Counters.TotalRejected, self[Col(MonitorTables.Servers, "frames_rejected")].Number);
                    Assert.Equal(Ports.All.ToArray().Count(host.IsLinkUp), self[Col(MonitorTables.Servers, "links_up")].Number);
                    Assert.Equal(0, self[Col(MonitorTables.Servers, "jobs_running")].Number);
                    // Every server dropped the job when its coordinator ended it, and remembers it as finished.
                    var ended = Assert.Single(jobs);
                    Assert.Equal("synthetic", ended[Col(MonitorTables.Jobs, "name")].Text);
                    Assert.Equal("finished", ended[Col(MonitorTables.Jobs, "state")].Text);
                    Assert.Equal(3, ended[Col(MonitorTables.Jobs, "reduce_tasks")].Number);
                    // The simulator discards output unless told where to write it.
                    Assert.Equal("discarded", ended[Col(MonitorTables.Jobs, "output")].Text);
                    // The simulator's clock: the job started at its start and ended some milliseconds later.
                    Assert.True(ended[Col(MonitorTables.Jobs, "ended_ms")].Number > 0);
                    Assert.InRange(ended[Col(MonitorTables.Jobs, "started_ms")].Number, 0, ended[Col(MonitorTables.Jobs, "ended_ms")].Number);
                    rootsDone += (int)ended[Col(MonitorTables.Jobs, "reduce_tasks_done")].Number;
                    outputBytes += ended[Col(MonitorTables.Jobs, "output_bytes")].Number;
                    checkedServers++;
                }
            },
        });
        // While the job ran, the table showed it; a reduce task is done at exactly one root, so no round counts more than R.
        var rounds = result.Queries[1].Rounds;
        Assert.Contains(rounds.SelectMany(r => r.Rows), row => row[0] == "synthetic" && row[1] == "running");
        Assert.All(rounds, r => Assert.InRange(r.Rows.Sum(row => double.Parse(row[2], CultureInfo.InvariantCulture)), 0, 3));
        Assert.True(result.Completed);
        Assert.True(result.Verified, result.VerificationError);
        Assert.Equal(Cube.Count, checkedServers);
        // Each reduce task was done at one root; a discarded output writes no file.
        Assert.Equal(3, rootsDone);
        Assert.Equal(0, outputBytes);
    }

    [Fact]
    public void AGroupedSumOverTheCubeEqualsTheSumOfThePerServerValues()
    {
        const string query = "select port, sum(frames_sent) as frames, count(*) as queues, max(bytes_sent) from services where service = 'camdoop' group by port every 2ms";
        var expected = new Dictionary<string, (double Frames, double Max)>();
        var result = JobSimulation.Run(WordCount(query) with
        {
            Inspect = (sim, _, _) =>
            {
                foreach (var port in Ports.All)
                {
                    var counters = Cube.All().Select(s => sim.Host(s).QueueCounters(WellKnownServices.Camdoop, port)).ToList();
                    expected[port.Name()] = (counters.Sum(c => c.FramesSent), counters.Max(c => c.BytesSent));
                }
            },
        });
        Assert.True(result.Completed);
        Assert.True(result.Verified, result.VerificationError);
        var rounds = Assert.Single(result.Queries).Rounds;
        Assert.True(rounds.Count >= 2, $"{rounds.Count} rounds");
        Assert.All(rounds, r => Assert.Equal(Cube.Count, r.Servers));
        Assert.All(rounds, r => Assert.InRange(r.LatencyNs, 1, 2_000_000));
        // The last round ran after the job had ended: the Camdoop queues no longer move.
        var last = rounds[^1];
        Assert.Equal(Ports.Count, last.Rows.Count);
        foreach (var row in last.Rows)
        {
            var (frames, max) = expected[row[0]];
            Assert.True(frames > 0);
            Assert.Equal(frames, double.Parse(row[1], CultureInfo.InvariantCulture));
            Assert.Equal(Cube.Count, double.Parse(row[2], CultureInfo.InvariantCulture));
            Assert.Equal(max, double.Parse(row[3], CultureInfo.InvariantCulture));
        }
        // Rounds while the job ran saw fewer frames than the end.
        static double Frames(SimulatedQueryRound round) => round.Rows.Sum(r => double.Parse(r[1], CultureInfo.InvariantCulture));
        Assert.True(Frames(rounds[0]) < Frames(last), $"first round {Frames(rounds[0])} frames, last {Frames(last)}");
    }

    [Fact]
    public void CombiningOnPathSendsFewerBytesToTheAskingServerForTheSameResult()
    {
        const string query = "select port, sum(frames_sent), min(bytes_sent), avg(frames_queued) from services where service = 'link-monitor' group by port every 10ms";
        var combined = AskOnce(query, combine: true);
        var forwarded = AskOnce(query, combine: false);
        Assert.Equal(Cube.Count, combined.Round.Servers);
        Assert.Equal(Cube.Count, forwarded.Round.Servers);
        Assert.Equal(Ports.Count, combined.Round.Rows.Count);
        Assert.Equal(Rows(forwarded.Round), Rows(combined.Round));
        // Combined, each of the root's six children sends one row per port; forwarded, every server's rows travel.
        Assert.True(combined.BytesAtRoot * 3 < forwarded.BytesAtRoot, $"combined {combined.BytesAtRoot} B, forwarded {forwarded.BytesAtRoot} B");
        Assert.True(combined.FramesAtRoot <= Ports.Count, $"{combined.FramesAtRoot} result frames");
    }

    [Fact]
    public void AnUngroupedTopKKeepsTheSameRowsAsTheCubeWideSort()
    {
        const string query = "select server, port, frames_sent from links top 5 by frames_sent every 10ms";
        var all = AskOnce("select server, port, frames_sent from links every 10ms", combine: true);
        var top = AskOnce(query, combine: true);
        Assert.Equal(Cube.Count * Ports.Count, all.Round.Rows.Count);
        var expected = all.Round.Rows.OrderByDescending(r => r[2]).ThenBy(r => r[0]).ThenBy(r => r[1]).Take(5).Select(r => r[2].Number).ToList();
        Assert.Equal(expected, top.Round.Rows.Select(r => r[2].Number).ToList());
        Assert.True(top.BytesAtRoot < all.BytesAtRoot);
    }

    [Fact]
    public void ServersWithoutAChunkStoreHaveNoStorageRows()
    {
        // AskOnce's servers run monitoring only: every one answers, none has a store to show.
        var round = AskOnce("select server, replicas from storage every 10ms", combine: true).Round;
        Assert.Equal(Cube.Count, round.Servers);
        Assert.Empty(round.Rows);
    }

    private static List<string> Rows(QueryRound round) => [.. round.Rows.Select(r => string.Join("|", r.Select(v => v.ToString())))];

    /// <summary>Asks one round of <paramref name="text"/> from 0,0,0 on an idle simulated cube (only liveness beacons move).</summary>
    private static (QueryRound Round, long BytesAtRoot, long FramesAtRoot) AskOnce(string text, bool combine)
    {
        using var sim = new Simulation(new SimulationOptions { Torus = Cube, Seed = 7 }, host => host.Register(new MonitorService(jobs: null)));
        sim.Start();
        var root = new Coordinate(0, 0, 0);
        QueryRound? round = null;
        sim.Schedule(50 * 1_000_000, () => sim.Host(root).GetService<MonitorService>()!.Ask(QueryParser.Parse(text), r => round = r, rounds: 1, combineOnPath: combine));
        Assert.True(sim.RunUntil(() => round is not null, 200 * 1_000_000));
        var counters = sim.Host(root).GetService<MonitorService>()!.Counters;
        return (round!, counters.ResultBytesReceived, counters.ResultFramesReceived);
    }

    private static int Col(TableSchema table, string name)
    {
        int i = table.IndexOf(name);
        Assert.True(i >= 0, name);
        return i;
    }
}
