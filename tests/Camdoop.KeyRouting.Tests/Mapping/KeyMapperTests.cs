using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting.Tests.Mapping;

public class KeyMapperTests
{
    private static Key RandomKey(Random rng) => new((ulong)rng.NextInt64() ^ ((ulong)rng.Next() << 63), (ulong)rng.NextInt64() << 1, (uint)rng.Next());

    private static ServerSet Live(Torus torus, IEnumerable<int> failed)
    {
        var set = ServerSet.AllOf(torus);
        foreach (int f in failed)
        {
            set.Remove(f);
        }
        return set;
    }

    [Theory]
    [InlineData(2, 2, 2)]
    [InlineData(2, 5, 4)]
    [InlineData(3, 3, 3)]
    [InlineData(3, 4, 5)]
    [InlineData(8, 8, 8)]
    public void Shells_cover_every_server_once_at_its_torus_distance(int x, int y, int z)
    {
        var torus = new Torus(x, y, z);
        var mapper = new KeyMapper(torus);
        var origin = new Coordinate(1, 1, 1 % z);
        var seen = new HashSet<Coordinate>();
        for (int d = 1; d <= torus.Diameter; d++)
        {
            foreach (var o in mapper.Shell(d))
            {
                var c = new Coordinate((origin.X + o.X + x) % x, (origin.Y + o.Y + y) % y, (origin.Z + o.Z + z) % z);
                Assert.Equal(d, torus.Distance(origin, c));
                Assert.True(seen.Add(c), $"{c} appears twice");
            }
        }
        Assert.Equal(torus.Count - 1, seen.Count);
        Assert.DoesNotContain(origin, seen);
    }

    [Theory]
    [InlineData(3, 3, 3)]
    [InlineData(3, 4, 5)]
    [InlineData(8, 8, 8)]
    [InlineData(7, 11, 13)]
    public void Every_server_gets_an_equal_share_of_the_top_64_bit_space(int x, int y, int z)
    {
        // Exact: the interval of top-64 values owned by each server has floor or ceil of 2^64 / N values.
        var torus = new Torus(x, y, z);
        var mapper = new KeyMapper(torus);
        UInt128 ideal = (UInt128.One << 64) / (ulong)torus.Count;
        for (int i = 0; i < torus.Count; i++)
        {
            UInt128 start = KeyMapper.FirstHighOf(torus, torus.CoordinateOf(i));
            UInt128 end = i + 1 < torus.Count ? KeyMapper.FirstHighOf(torus, torus.CoordinateOf(i + 1)) : UInt128.One << 64;
            Assert.InRange(end - start, ideal, ideal + 1);
            Assert.Equal(i, mapper.PrimaryIndex(new Key((ulong)(end - 1), 0, 0)));
        }
    }

    [Theory]
    [InlineData(3, 3, 3, 100_000)]
    [InlineData(8, 8, 8, 2_000_000)]
    public void Random_keys_spread_within_ten_percent_of_uniform(int x, int y, int z, int keys)
    {
        // 100,000 keys over 512 servers would be 195 per server, where one standard deviation is 7%:
        // the 8x8x8 run uses 2,000,000 keys so that ±10% is a meaningful bound (over 6 standard deviations).
        var torus = new Torus(x, y, z);
        var mapper = new KeyMapper(torus);
        var counts = new int[torus.Count];
        var rng = new Random(5);
        for (int i = 0; i < keys; i++)
        {
            counts[mapper.PrimaryIndex(RandomKey(rng))]++;
        }
        double expected = (double)keys / torus.Count;
        Assert.All(counts, c => Assert.InRange(c, expected * 0.9, expected * 1.1));
    }

    [Fact]
    public void Sha1_keys_spread_within_ten_percent_on_3x3x3()
    {
        var torus = new Torus(3, 3, 3);
        var mapper = new KeyMapper(torus);
        var counts = new int[torus.Count];
        for (int i = 0; i < 100_000; i++)
        {
            counts[mapper.PrimaryIndex(Key.FromString("chunk-" + i))]++;
        }
        double expected = 100_000.0 / torus.Count;
        Assert.All(counts, c => Assert.InRange(c, expected * 0.9, expected * 1.1));
    }

    public static TheoryData<string, double> FailureCases => new()
    {
        { "3x3x3", 0.1 },
        { "3x3x3", 0.5 },
        { "3x3x3", 0.9 },
        { "8x8x8", 0.02 },
        { "8x8x8", 0.3 },
        { "8x8x8", 0.75 },
        { "8x8x8", 0.98 },
        { "3x4x5", 0.4 },
        { "2x5x4", 0.6 },
    };

    [Theory]
    [MemberData(nameof(FailureCases))]
    public void With_failures_every_key_maps_to_the_nearest_live_shell_and_the_same_on_every_server(string shape, double failedFraction)
    {
        var torus = Torus.Parse(shape);
        var rng = new Random(HashCode.Combine(shape, failedFraction) & 0xFFFF);
        var failed = Enumerable.Range(0, torus.Count).Where(_ => rng.NextDouble() < failedFraction).ToList();
        if (failed.Count == torus.Count)
        {
            failed.RemoveAt(0);
        }
        var live = Live(torus, failed);
        // Another server with the same view: its own mapper instance and its own copy of the set.
        var otherMapper = new KeyMapper(torus);
        var otherView = live.Clone();
        var mapper = KeyMapper.Shared(torus);
        var liveList = live.Members().Select(torus.CoordinateOf).ToList();
        for (int i = 0; i < 20_000; i++)
        {
            var key = RandomKey(rng);
            int owner = mapper.OwnerIndex(key, live);
            Assert.True(live.Contains(owner));
            Assert.Equal(owner, otherMapper.OwnerIndex(key, otherView));
            int primary = mapper.PrimaryIndex(key);
            if (live.Contains(primary))
            {
                Assert.Equal(primary, owner);
                continue;
            }
            var p = torus.CoordinateOf(primary);
            int nearest = liveList.Min(c => torus.Distance(p, c));
            Assert.Equal(nearest, torus.Distance(p, torus.CoordinateOf(owner)));
        }
    }

    [Fact]
    public void A_failed_servers_keys_spread_evenly_over_its_six_neighbours_and_no_other_key_moves()
    {
        var torus = new Torus(8, 8, 8);
        var mapper = new KeyMapper(torus);
        var failed = new Coordinate(3, 4, 5);
        var live = Live(torus, [torus.IndexOf(failed)]);
        var neighbours = Ports.All.ToArray().Select(p => torus.Neighbour(failed, p)).ToList();
        var counts = new Dictionary<Coordinate, int>();
        var rng = new Random(6);
        var suffix = new byte[Key.SuffixSize];
        const int keys = 60_000;
        for (int i = 0; i < keys; i++)
        {
            rng.NextBytes(suffix);
            var key = Key.FromCoordinate(torus, failed, suffix);
            var owner = mapper.Owner(key, live);
            counts[owner] = counts.GetValueOrDefault(owner) + 1;
        }
        Assert.Equal(neighbours.ToHashSet(), counts.Keys.ToHashSet());
        Assert.All(counts.Values, c => Assert.InRange(c, keys / 6 * 0.95, keys / 6 * 1.05));
        for (int i = 0; i < 20_000; i++)
        {
            var key = RandomKey(rng);
            if (mapper.PrimaryIndex(key) != torus.IndexOf(failed))
            {
                Assert.Equal(mapper.Primary(key), mapper.Owner(key, live));
            }
        }
    }

    [Fact]
    public void When_the_owner_and_all_six_neighbours_fail_keys_cascade_evenly_to_the_second_shell()
    {
        var torus = new Torus(8, 8, 8);
        var mapper = new KeyMapper(torus);
        var failed = new Coordinate(0, 0, 0);
        var dead = new List<int> { torus.IndexOf(failed) };
        dead.AddRange(Ports.All.ToArray().Select(p => torus.IndexOf(torus.Neighbour(failed, p))));
        var live = Live(torus, dead);
        var counts = new Dictionary<Coordinate, int>();
        var rng = new Random(7);
        var suffix = new byte[Key.SuffixSize];
        const int keys = 180_000;
        for (int i = 0; i < keys; i++)
        {
            rng.NextBytes(suffix);
            var owner = mapper.Owner(Key.FromCoordinate(torus, failed, suffix), live);
            Assert.Equal(2, torus.Distance(failed, owner));
            counts[owner] = counts.GetValueOrDefault(owner) + 1;
        }
        Assert.Equal(18, counts.Count); // the whole second shell of an 8x8x8 torus
        Assert.All(counts.Values, c => Assert.InRange(c, keys / 18 * 0.9, keys / 18 * 1.1));
    }

    [Fact]
    public void A_neighbours_keys_stay_put_when_it_is_the_failed_servers_heir()
    {
        // Consistency across views that differ in one unrelated failure: a key whose owner is live in both views
        // and whose primary is live keeps its owner.
        var torus = new Torus(3, 3, 3);
        var mapper = new KeyMapper(torus);
        var viewA = Live(torus, [0]);
        var viewB = Live(torus, [0, 13]);
        var rng = new Random(8);
        for (int i = 0; i < 10_000; i++)
        {
            var key = RandomKey(rng);
            int primary = mapper.PrimaryIndex(key);
            if (primary != 0 && primary != 13)
            {
                Assert.Equal(mapper.OwnerIndex(key, viewA), mapper.OwnerIndex(key, viewB));
            }
        }
    }

    [Fact]
    public void An_empty_view_has_no_owner()
    {
        var torus = new Torus(3, 3, 3);
        var mapper = new KeyMapper(torus);
        var none = new ServerSet(torus.Count);
        Assert.Equal(-1, mapper.OwnerIndex(Key.FromString("x"), none));
        Assert.Throws<InvalidOperationException>(() => mapper.Owner(Key.FromString("x"), none));
    }
}
