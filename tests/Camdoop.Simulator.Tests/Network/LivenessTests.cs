using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;
using static Camdoop.Simulator.Tests.Network.SimulationFixture;

namespace Camdoop.Simulator.Tests.Network;

public class LivenessTests
{
    private const long Ms = SimTime.Millisecond;

    [Fact]
    public void NeighboursDetectACrashedServerAfterTheBeaconMisses()
    {
        var victim = new Coordinate(1, 1, 1);
        using var sim = new Simulation(Options(), h => h.Register(new LinkWatcher()));
        sim.Start();
        long failAt = 53 * Ms;
        sim.FailServer(victim, failAt);
        sim.RunUntil(150 * Ms);

        Assert.True(sim.IsServerFailed(victim));
        Assert.True(sim.Host(victim).IsHalted);
        Assert.True(Service<LinkWatcher>(sim, victim).Stopped);
        foreach (var port in Ports.All)
        {
            var neighbour = sim.Torus.Neighbour(victim, port);
            var change = Assert.Single(Service<LinkWatcher>(sim, neighbour).Changes);
            Assert.Equal((port.Opposite(), false), (change.Port, change.Up));
            // Last beacon heard at 50 ms; down at the first tick more than 3 x 10 ms later.
            Assert.InRange(change.Time - failAt, 3 * 10 * Ms - (10 * Ms), (3 + 1) * 10 * Ms);
            Assert.False(sim.Host(neighbour).IsLinkUp(port.Opposite()));
        }
        foreach (var c in sim.Torus.All())
        {
            if (c != victim && sim.Torus.Distance(c, victim) > 1)
            {
                Assert.Empty(Service<LinkWatcher>(sim, c).Changes);
            }
        }
    }

    [Fact]
    public void DetectionTimeFollowsTheBeaconSettings()
    {
        var victim = new Coordinate(0, 0, 0);
        var options = Options() with { Node = SimulationOptions.DefaultNodeOptions with { BeaconInterval = 2 * Ms, BeaconMisses = 5 } };
        using var sim = new Simulation(options, h => h.Register(new LinkWatcher()));
        sim.Start();
        sim.FailServer(victim, 21 * Ms);
        sim.RunUntil(60 * Ms);
        var change = Assert.Single(Service<LinkWatcher>(sim, sim.Torus.Neighbour(victim, Port.XPlus)).Changes);
        Assert.InRange(change.Time - (21 * Ms), 5 * 2 * Ms - (2 * Ms), 6 * 2 * Ms);
    }

    [Fact]
    public void ALinkFailureIsSeenAtOnceByBothEndsAndARestoreBringsItBack()
    {
        var a = new Coordinate(2, 0, 1);
        using var sim = new Simulation(Options(), h => h.Register(new LinkWatcher()));
        sim.Start();
        long cutAt = (20 * Ms) + 123;
        long restoreAt = 64 * Ms;
        sim.FailLink(a, Port.YMinus, cutAt);
        sim.RestoreLink(a, Port.YMinus, restoreAt);
        sim.RunUntil(40 * Ms);

        var b = sim.Torus.Neighbour(a, Port.YMinus);
        Assert.True(sim.IsLinkFailed(a, Port.YMinus));
        Assert.True(sim.IsLinkFailed(b, Port.YPlus));
        Assert.Equal([(cutAt, Port.YMinus, false)], Service<LinkWatcher>(sim, a).Changes);
        Assert.Equal([(cutAt, Port.YPlus, false)], Service<LinkWatcher>(sim, b).Changes);

        sim.RunUntil(100 * Ms);
        Assert.False(sim.IsLinkFailed(a, Port.YMinus));
        foreach (var (node, port) in new[] { (a, Port.YMinus), (b, Port.YPlus) })
        {
            var changes = Service<LinkWatcher>(sim, node).Changes;
            Assert.Equal(2, changes.Count);
            Assert.Equal((port, true), (changes[1].Port, changes[1].Up));
            // Carrier return sends a beacon at once: up one frame time plus latency later, not at the next tick.
            Assert.InRange(changes[1].Time - restoreAt, 1, 100 * SimTime.Microsecond);
            Assert.True(sim.Host(node).IsLinkUp(port));
        }
    }

    [Fact]
    public void ARestoredServerRebootsWithFreshServicesAndItsNeighboursBringTheLinksBackUp()
    {
        var victim = new Coordinate(2, 2, 2);
        int boots = 0;
        using var sim = new Simulation(Options(), h =>
        {
            if (h.Self == victim)
            {
                boots++;
            }
            h.Register(new LinkWatcher());
        });
        sim.Start();
        var before = sim.Host(victim);
        var watcherBefore = Service<LinkWatcher>(sim, victim);
        sim.FailServer(victim, 10 * Ms);
        sim.RestoreServer(victim, 100 * Ms);
        sim.RunUntil(99 * Ms);
        foreach (var port in Ports.All)
        {
            Assert.False(sim.Host(sim.Torus.Neighbour(victim, port)).IsLinkUp(port.Opposite()));
        }

        sim.RunUntil(130 * Ms);
        Assert.Equal(2, boots);
        Assert.False(sim.IsServerFailed(victim));
        var after = sim.Host(victim);
        Assert.NotSame(before, after);
        Assert.True(before.IsHalted);
        Assert.False(after.IsHalted);
        Assert.NotSame(watcherBefore, Service<LinkWatcher>(sim, victim));
        foreach (var port in Ports.All)
        {
            Assert.True(after.IsLinkUp(port));
            var neighbour = sim.Torus.Neighbour(victim, port);
            Assert.True(sim.Host(neighbour).IsLinkUp(port.Opposite()));
            var up = Service<LinkWatcher>(sim, neighbour).Changes[^1];
            Assert.True(up.Up);
            Assert.InRange(up.Time, 100 * Ms, 101 * Ms); // the rebooted server beacons as it starts
        }
        Assert.True(after.Monitor.BeaconsSent > 0);
    }
}
