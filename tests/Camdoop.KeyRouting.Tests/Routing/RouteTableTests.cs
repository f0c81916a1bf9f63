using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting.Tests.Routing;

public class RouteTableTests
{
    /// <summary>The truth of a damaged torus: failed servers and failed (undirected) links.</summary>
    private sealed class Damage(Torus torus)
    {
        public HashSet<int> FailedServers { get; } = [];

        public HashSet<(int, int)> FailedLinks { get; } = [];

        public void FailLink(int server, Port port)
        {
            FailedLinks.Add((server, (int)port));
            FailedLinks.Add((torus.NeighbourIndex(server, port), (int)port.Opposite()));
        }

        public bool IsLive(int server, Port port) =>
            !FailedLinks.Contains((server, (int)port)) && !FailedServers.Contains(server) && !FailedServers.Contains(torus.NeighbourIndex(server, port));

        /// <summary>What the live servers advertise: each its own link bits; failed servers stay as last heard (all up).</summary>
        public LinkStateDatabase Database()
        {
            var db = new LinkStateDatabase(torus.Count);
            for (int s = 0; s < torus.Count; s++)
            {
                if (FailedServers.Contains(s))
                {
                    continue;
                }
                byte bits = 0;
                foreach (var p in Ports.All)
                {
                    if (IsLive(s, p))
                    {
                        bits |= (byte)(1 << (int)p);
                    }
                }
                db.Set(new LinkStateAdvertisement(s, 0, 1, bits));
            }
            return db;
        }

        /// <summary>Reference hop counts from <paramref name="source"/>, by plain BFS over live links.</summary>
        public int[] Distances(int source)
        {
            var dist = Enumerable.Repeat(-1, torus.Count).ToArray();
            var queue = new Queue<int>();
            dist[source] = 0;
            queue.Enqueue(source);
            while (queue.Count > 0)
            {
                int u = queue.Dequeue();
                foreach (var p in Ports.All)
                {
                    int v = torus.NeighbourIndex(u, p);
                    if (IsLive(u, p) && dist[v] < 0)
                    {
                        dist[v] = dist[u] + 1;
                        queue.Enqueue(v);
                    }
                }
            }
            return dist;
        }
    }

    public static TheoryData<string, int, int> Cases => new()
    {
        { "3x3x3", 0, 0 },
        { "3x3x3", 5, 2 },
        { "8x8x8", 0, 0 },
        { "8x8x8", 40, 6 },
        { "8x8x8", 300, 60 },
        { "3x4x5", 10, 3 },
        { "2x2x3", 2, 1 },
        { "2x5x4", 8, 2 },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void Distances_and_next_hops_match_a_reference_bfs(string shape, int failedLinks, int failedServers)
    {
        var torus = Torus.Parse(shape);
        var rng = new Random(failedLinks * 31 + failedServers);
        var damage = new Damage(torus);
        for (int i = 0; i < failedServers; i++)
        {
            damage.FailedServers.Add(rng.Next(torus.Count));
        }
        for (int i = 0; i < failedLinks; i++)
        {
            damage.FailLink(rng.Next(torus.Count), (Port)rng.Next(Ports.Count));
        }
        var db = damage.Database();
        var reference = new int[torus.Count][];
        for (int s = 0; s < torus.Count; s++)
        {
            reference[s] = damage.Distances(s);
        }
        for (int self = 0; self < torus.Count; self++)
        {
            if (damage.FailedServers.Contains(self))
            {
                continue;
            }
            var table = new RouteTable(torus, self);
            table.Compute(db);
            for (int d = 0; d < torus.Count; d++)
            {
                int expected = reference[self][d];
                Assert.Equal(expected, table.Distance(d));
                Assert.Equal(expected >= 0, table.Reachable.Contains(d));
                byte ports = 0;
                if (expected > 0)
                {
                    foreach (var p in Ports.All)
                    {
                        if (damage.IsLive(self, p) && reference[torus.NeighbourIndex(self, p)][d] == expected - 1)
                        {
                            ports |= (byte)(1 << (int)p);
                        }
                    }
                }
                Assert.Equal(ports, table.NextHopPorts(d));
            }
            if (failedLinks == 0 && failedServers == 0)
            {
                Assert.All(Enumerable.Range(0, torus.Count), d => Assert.Equal(torus.Distance(torus.CoordinateOf(self), torus.CoordinateOf(d)), table.Distance(d)));
            }
        }
    }

    [Fact]
    public void A_link_counts_as_live_only_when_both_ends_say_so()
    {
        var torus = new Torus(3, 3, 3);
        var db = new LinkStateDatabase(torus.Count);
        int a = 0;
        int b = torus.NeighbourIndex(a, Port.XPlus);
        // Only b says the link is down; a still claims it up.
        db.Set(new LinkStateAdvertisement(b, 0, 1, (byte)(LinkStateAdvertisement.AllUp & ~(1 << (int)Port.XMinus))));
        var table = new RouteTable(torus, a);
        table.Compute(db);
        Assert.Equal(2, table.Distance(b));
        Assert.Equal(0, table.NextHopPorts(b) & (1 << (int)Port.XPlus));
    }

    [Fact]
    public void Flow_hashes_pick_every_equal_cost_port_evenly_and_a_flow_always_the_same_one()
    {
        var torus = new Torus(8, 8, 8);
        var table = new RouteTable(torus, 0);
        table.Compute(new LinkStateDatabase(torus.Count));
        int target = torus.IndexOf(new Coordinate(2, 2, 2)); // +X, +Y and +Z all start shortest paths
        Assert.Equal(0b010101, table.NextHopPorts(target));
        var counts = new int[Ports.Count];
        var rng = new Random(9);
        for (int i = 0; i < 30_000; i++)
        {
            ulong flow = KeyMapper.Mix((ulong)rng.NextInt64());
            Assert.True(table.TryNextHop(target, flow, out var port));
            Assert.True(table.TryNextHop(target, flow, out var again));
            Assert.Equal(port, again);
            counts[(int)port]++;
        }
        Assert.All(new[] { Port.XPlus, Port.YPlus, Port.ZPlus }, p => Assert.InRange(counts[(int)p], 9_500, 10_500));
        Assert.False(table.TryNextHop(0, 123, out _));
    }
}
