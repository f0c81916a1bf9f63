using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;

namespace Camdoop.KeyRouting.Tests.Simulation;

/// <summary>Link-state convergence and key routing over the simulated torus, after link and server failures and restores.</summary>
public class ConvergenceTests
{
    private const long Ms = RoutedCube.Ms;

    /// <summary>
    /// Sends <paramref name="perSource"/> frames to random keys from each of <paramref name="sources"/> live servers
    /// (spread over time), then checks each arrived once, at the key's owner under the true failure view, over a
    /// shortest live path.
    /// </summary>
    private static void AssertKeyRoutingIsExact(RoutedCube cube, int sources, int perSource, ulong seed)
    {
        var rng = new Xoshiro256StarStar(seed);
        var live = cube.LiveServers.ToList();
        var senders = live.OrderBy(_ => rng.NextUInt64()).Take(sources).ToList();
        var truthView = cube.TrueReachable(live[0]);
        var mapper = KeyMapper.Shared(cube.Torus);
        var expected = new Dictionary<long, (Coordinate Owner, int Hops)>();
        long start = cube.Sim.Now + Ms;
        long id = 0;
        long droppedBefore = cube.Dropped(c => c.DroppedNoRoute + c.DroppedTtl + c.DroppedForward);
        var before = live.ToDictionary(c => c, c => cube.ProbeAt(c).Received.Count);
        foreach (var source in senders)
        {
            var distances = cube.TrueDistances(source);
            for (int k = 0; k < perSource; k++)
            {
                var key = new Key(rng.NextUInt64(), rng.NextUInt64(), (uint)rng.NextUInt64());
                var owner = mapper.Owner(key, truthView);
                long frameId = ++id;
                expected[frameId] = (owner, distances[cube.Torus.IndexOf(owner)]);
                var probe = cube.ProbeAt(source);
                cube.Sim.Schedule(start + (k * 20 * SimTime.Microsecond), () => Assert.Equal(Runtime.Node.SendStatus.Queued, probe.SendToKey(frameId, key)));
            }
        }
        cube.Sim.RunUntil(start + (perSource * 20 * SimTime.Microsecond) + (20 * Ms));
        var arrived = new Dictionary<long, (Coordinate At, int Hops)>();
        foreach (var c in live)
        {
            foreach (var r in cube.ProbeAt(c).Received.Skip(before[c]))
            {
                Assert.True(arrived.TryAdd(r.Id, (c, r.Hops)), $"frame {r.Id} arrived twice");
            }
        }
        Assert.Equal(expected.Count, arrived.Count);
        foreach (var (frameId, want) in expected)
        {
            Assert.Equal(want, arrived[frameId]);
        }
        Assert.Equal(droppedBefore, cube.Dropped(c => c.DroppedNoRoute + c.DroppedTtl + c.DroppedForward));
    }

    private static void AssertConverged(RoutedCube cube)
    {
        Assert.Null(cube.FirstDisagreement());
        foreach (var c in cube.LiveServers)
        {
            var view = cube.Routing(c);
            var truth = cube.TrueDistances(c);
            foreach (var d in cube.Torus.All())
            {
                Assert.Equal(truth[cube.Torus.IndexOf(d)], view.Distance(d));
            }
        }
    }

    [Theory]
    [InlineData(3, 3, 3, 27, 30)]
    [InlineData(8, 8, 8, 48, 20)]
    public void A_healthy_cube_routes_every_key_to_its_owner_over_a_shortest_path(int x, int y, int z, int sources, int perSource)
    {
        using var cube = new RoutedCube(new Torus(x, y, z));
        cube.Sim.RunUntil(5 * Ms);
        AssertConverged(cube);
        AssertKeyRoutingIsExact(cube, sources, perSource, seed: 11);
        // A healthy cube needs no flooding at all.
        Assert.Equal(0, cube.LiveServers.Sum(c => cube.Routing(c).Counters.AdvertisementsOriginated));
    }

    [Theory]
    [InlineData(3, 3, 3)]
    [InlineData(8, 8, 8)]
    public void After_a_link_failure_and_its_restore_views_converge_and_routing_stays_shortest(int x, int y, int z)
    {
        using var cube = new RoutedCube(new Torus(x, y, z));
        var end = new Coordinate(1, 1, 1);
        cube.Sim.FailLink(end, Port.YPlus, 10 * Ms);
        cube.Sim.RunUntil(20 * Ms);
        AssertConverged(cube);
        Assert.False(cube.Routing(new Coordinate(0, 0, 0)).IsLinkLive(end, Port.YPlus));
        AssertKeyRoutingIsExact(cube, sources: 20, perSource: 20, seed: 12);

        cube.Sim.RestoreLink(end, Port.YPlus, cube.Sim.Now + Ms);
        cube.Sim.RunUntil(cube.Sim.Now + (60 * Ms)); // carrier back, beacons bring the link up, news floods
        AssertConverged(cube);
        Assert.True(cube.Routing(new Coordinate(0, 0, 0)).IsLinkLive(end, Port.YPlus));
        AssertKeyRoutingIsExact(cube, sources: 20, perSource: 20, seed: 13);
    }

    [Theory]
    [InlineData(3, 3, 3)]
    [InlineData(8, 8, 8)]
    public void After_a_server_failure_its_keys_move_to_a_neighbour_and_come_back_when_it_reboots(int x, int y, int z)
    {
        var listeners = new Dictionary<Coordinate, RecordingListener>();
        using var cube = new RoutedCube(new Torus(x, y, z), extra: host =>
        {
            var l = new RecordingListener();
            listeners[host.Self] = l;
            host.GetService<KeyRoutingService>()!.AddOwnershipListener(l);
        });
        var victim = new Coordinate(2, 1, 0);
        var key = Key.FromCoordinate(cube.Torus, victim, Key.FromString("job-1"));
        var watcher = new Coordinate(0, 2, 2);
        Assert.Equal(victim, cube.Routing(watcher).Owner(key));

        cube.Sim.FailServer(victim, 10 * Ms);
        cube.Sim.RunUntil(100 * Ms); // beacons time out after 30-40 ms, then the news floods
        AssertConverged(cube);
        foreach (var c in cube.LiveServers)
        {
            Assert.False(cube.Routing(c).IsReachable(victim));
            var change = Assert.Single(listeners[c].Changes);
            Assert.Equal([victim], change.BecameUnreachable);
        }
        var heir = cube.Routing(watcher).Owner(key);
        Assert.Equal(1, cube.Torus.Distance(victim, heir));
        Assert.All(cube.LiveServers, c => Assert.Equal(heir, cube.Routing(c).Owner(key)));
        AssertKeyRoutingIsExact(cube, sources: 20, perSource: 30, seed: 14);
        // Frames for the victim's keys sent after convergence reach its heir.
        cube.ProbeAt(watcher).SendToKey(-1, key);
        cube.Sim.RunUntil(cube.Sim.Now + (5 * Ms));
        Assert.Contains(cube.ProbeAt(heir).Received, r => r.Id == -1);

        cube.Sim.RestoreServer(victim, cube.Sim.Now + Ms);
        cube.Sim.RunUntil(cube.Sim.Now + (60 * Ms));
        AssertConverged(cube);
        Assert.All(cube.LiveServers, c => Assert.Equal(victim, cube.Routing(c).Owner(key)));
        foreach (var c in cube.LiveServers.Where(c => c != victim))
        {
            Assert.Equal(2, listeners[c].Changes.Count);
            Assert.Equal([victim], listeners[c].Changes[1].BecameReachable);
        }
        AssertKeyRoutingIsExact(cube, sources: 20, perSource: 30, seed: 15);
    }

    [Fact]
    public void A_rebooted_server_that_had_advertised_before_outbids_its_previous_life()
    {
        using var cube = new RoutedCube(new Torus(3, 3, 3));
        var victim = new Coordinate(1, 1, 1);
        cube.Sim.FailLink(victim, Port.XPlus, 5 * Ms); // the victim advertises a down link...
        cube.Sim.RunUntil(10 * Ms);
        cube.Sim.RestoreLink(victim, Port.XPlus, 10 * Ms);
        cube.Sim.FailServer(victim, 11 * Ms); // ...and crashes before anyone hears that link come back
        cube.Sim.RunUntil(100 * Ms);
        cube.Sim.RestoreServer(victim, 100 * Ms);
        cube.Sim.RunUntil(200 * Ms);
        AssertConverged(cube);
        var seen = cube.Routing(new Coordinate(0, 0, 0)).AdvertisementOf(victim);
        Assert.Equal(LinkStateAdvertisement.AllUp, seen.Links);
        Assert.True(seen.Epoch > 0);
        AssertKeyRoutingIsExact(cube, sources: 27, perSource: 20, seed: 16);
    }

    [Fact]
    public void Several_failures_at_once_including_all_six_neighbours_of_a_server()
    {
        using var cube = new RoutedCube(new Torus(8, 8, 8));
        var centre = new Coordinate(4, 4, 4);
        foreach (var p in Ports.All)
        {
            cube.Sim.FailServer(cube.Torus.Neighbour(centre, p), 10 * Ms);
        }
        cube.Sim.FailServer(centre, 10 * Ms);
        cube.Sim.FailLink(new Coordinate(0, 0, 0), Port.ZMinus, 12 * Ms);
        cube.Sim.FailLink(new Coordinate(7, 3, 2), Port.XPlus, 13 * Ms);
        cube.Sim.RunUntil(120 * Ms);
        AssertConverged(cube);
        var key = Key.FromCoordinate(cube.Torus, centre, Key.FromString("vertex"));
        var owner = cube.Routing(new Coordinate(0, 0, 0)).Owner(key);
        Assert.Equal(2, cube.Torus.Distance(centre, owner));
        AssertKeyRoutingIsExact(cube, sources: 30, perSource: 30, seed: 17);
    }

    private sealed class RecordingListener : IOwnershipListener
    {
        public List<OwnershipChange> Changes { get; } = [];

        public void OnOwnershipChanged(OwnershipChange change) => Changes.Add(change);
    }
}
