using Camdoop.KeyRouting;
using Camdoop.MapReduce.Service;
using Camdoop.Monitoring.Control;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Server;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Limits;

/// <summary>A limit sent down the monitoring tree from one server: every covered server applies it, the tables show it.</summary>
public sealed class LimitDistributionTests
{
    private static readonly Torus Cube = new(3, 3, 3);
    private static readonly Coordinate Asker = new(1, 1, 1);

    private static Simulation Start()
    {
        var sim = new Simulation(new SimulationOptions { Torus = Cube, Seed = 1 }, host =>
        {
            KeyRoutingService.Install(host);
            var camdoop = CamdoopService.Install(host);
            host.Register(new MonitorService(new CamdoopJobSource(camdoop)));
        });
        sim.Start();
        return sim;
    }

    [Fact]
    public void AServiceLimitReachesTheServersAndPortsItNamesAndNoOthers()
    {
        using var sim = Start();
        Coordinate[] chosen = [new(0, 0, 0), new(2, 2, 2), new(1, 1, 1), new(1, 0, 2)];
        var limit = RateLimit.ForService(WellKnownServices.Camdoop, 6_250_000, portMask: (1 << (int)Port.XPlus) | (1 << (int)Port.ZMinus), servers: chosen);
        sim.Schedule(sim.Now, () => sim.Host(Asker).GetService<MonitorService>()!.Distribute(limit));
        sim.RunFor(10 * SimTime.Millisecond);

        foreach (var server in Cube.All())
        {
            var host = sim.Host(server);
            foreach (var port in Ports.All)
            {
                bool covered = chosen.Contains(server) && (port is Port.XPlus or Port.ZMinus);
                Assert.Equal(covered ? 6_250_000 : 0, host.RateLimit(WellKnownServices.Camdoop, port));
                Assert.Equal(0, host.RateLimit(WellKnownServices.KeyRouting, port));
            }
            Assert.Equal(chosen.Contains(server) ? 1 : 0, host.GetService<MonitorService>()!.Counters.LimitsApplied);
        }

        // The services table of the whole cube says the same, through a query asked from the same server.
        QueryRound? round = null;
        var query = QueryParser.Parse("select server, port, limit from services where limit > 0 every 1s");
        sim.Schedule(sim.Now, () => sim.Host(Asker).GetService<MonitorService>()!.Ask(query, r => round = r, rounds: 1));
        sim.RunFor(100 * SimTime.Millisecond);
        Assert.NotNull(round);
        Assert.Equal(27, round.Servers);
        Assert.Equal(
            chosen.SelectMany(c => new[] { $"{c.Name} +X", $"{c.Name} -Z" }).Order(StringComparer.Ordinal),
            round.Rows.Select(r => $"{r[0].Text} {r[1].Text}").Order(StringComparer.Ordinal));
        Assert.All(round.Rows, r => Assert.Equal(6_250_000, r[2].Number));

        // Lifted the same way.
        sim.Schedule(sim.Now, () => sim.Host(Asker).GetService<MonitorService>()!.Distribute(limit with { BytesPerSecond = 0 }));
        sim.RunFor(10 * SimTime.Millisecond);
        Assert.All(Cube.All(), s => Assert.All(Ports.All.ToArray(), p => Assert.Equal(0, sim.Host(s).RateLimit(WellKnownServices.Camdoop, p))));
    }

    [Fact]
    public void AJobLimitWaitsOnEveryServerForItsJob()
    {
        using var sim = Start();
        ulong job = 0xCA3D_0000_0000_0009UL;
        sim.Schedule(sim.Now, () => sim.Host(new Coordinate(2, 0, 1)).GetService<MonitorService>()!.Distribute(RateLimit.ForJob(job, 1_000_000)));
        sim.RunFor(10 * SimTime.Millisecond);
        foreach (var server in Cube.All())
        {
            var transport = sim.Host(server).GetService<CamdoopService>()!.Transport;
            Assert.All(Ports.All.ToArray(), p => Assert.Equal(1_000_000, transport.JobLimit(job, p)));
            Assert.Equal(0, transport.JobLimit(job + 1, Port.XPlus));
        }
    }

    [Fact]
    public void ALimitFromTheWrongPortIsDroppedAndCounted()
    {
        using var sim = Start();
        // A limit claiming to come from 0,0,0's tree, arriving at 2,2,2 from a neighbour that is not its parent there.
        var payload = RateLimitWire.Write(new Coordinate(0, 0, 0), RateLimit.ForService(WellKnownServices.Camdoop, 1_000));
        var target = new Coordinate(2, 2, 2);
        var parent = QueryTree.ParentPort(Cube, target, new Coordinate(0, 0, 0))!.Value;
        var wrong = Ports.All.ToArray().First(p => p != parent);
        var sender = Cube.Neighbour(target, wrong);
        var senderPort = wrong.Opposite();
        sim.Schedule(sim.Now, () =>
        {
            var host = sim.Host(sender);
            var header = new Runtime.Frames.FrameHeader(WellKnownServices.Monitoring, sender, target);
            host.TrySend(senderPort, ref header, default, payload);
        });
        sim.RunFor(5 * SimTime.Millisecond);
        Assert.Equal(1, sim.Host(target).GetService<MonitorService>()!.Counters.Malformed);
        Assert.All(Ports.All.ToArray(), p => Assert.Equal(0, sim.Host(target).RateLimit(WellKnownServices.Camdoop, p)));
    }
}
