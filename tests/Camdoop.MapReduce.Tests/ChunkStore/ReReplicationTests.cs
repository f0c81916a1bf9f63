using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.ChunkStore;

/// <summary>
/// Re-replication and reconciliation on a simulated 3x3x3 cube: a server lost past the grace period has its replicas
/// made again on the servers that now own its replica positions, so the data survives two more losses; a server that
/// comes back keeps what it should hold and drops what is held three times elsewhere; one that comes back with an
/// empty disk receives its share again.
/// </summary>
public sealed class ReReplicationTests : IDisposable
{
    private static readonly Torus Cube = new(3, 3, 3);
    private const long Ms = StoreCube.Ms;
    private const int Chunks = 40;

    private static readonly ChunkStoreOptions Fast = StoreCube.KeepingReplicas;

    private readonly string _data = Directory.CreateTempSubdirectory("camdoop-rereplication-").FullName;

    public void Dispose() => Directory.Delete(_data, recursive: true);

    [Fact]
    public void ALostServersReplicasAreMadeAgainAndTheDataSurvivesTwoMoreLosses()
    {
        using var cube = new StoreCube(Cube, dataRoot: _data, options: Fast);
        var chunks = WriteChunks(cube);
        var lost = new Coordinate(1, 1, 1);
        var held = chunks.Where(c => Holders(cube, c.Id).Contains(lost)).ToList();
        Assert.NotEmpty(held);
        cube.Sim.FailServer(lost, cube.Sim.Now);
        cube.Settle(100 * Ms);
        Assert.Contains(chunks, c => Holders(cube, c.Id).Count < ChunkPlacement.Replicas);
        // Within the grace, nothing is copied...
        cube.Settle(2_000 * Ms);
        Assert.All(Cube.All().Where(s => s != lost), s => Assert.Equal(0, cube.Store(s).Counters.ReplicasCopied));
        // ...after it, every chunk is back at three good replicas on live servers.
        WaitUntil(cube, () => chunks.All(c => Holders(cube, c.Id).Count(h => h != lost) == ChunkPlacement.Replicas), "three live replicas of every chunk");
        long copied = Cube.All().Where(s => s != lost).Sum(s => cube.Store(s).Counters.ReplicasCopied);
        Assert.Equal(held.Count, copied);
        Assert.True(Cube.All().Where(s => s != lost).Sum(s => cube.Store(s).Counters.ServersLost) > 0);

        // Two more servers that held copies of one of the lost server's chunks: it is still read, byte for byte.
        var victim = held[0];
        var others = Holders(cube, victim.Id).Where(h => h != lost).Take(2).ToList();
        foreach (var server in others)
        {
            cube.Sim.FailServer(server, cube.Sim.Now);
        }
        cube.Settle(3_000 * Ms);
        var reader = Cube.All().First(s => s != lost && !others.Contains(s));
        var read = cube.Read(reader, victim.Id);
        Assert.True(read.Ok, read.Error);
        Assert.Equal(victim.Bytes, read.Bytes);
    }

    [Fact]
    public void CopiesTravelInTheReReplicationServiceWhoseLimitCapsThem()
    {
        const long Rate = 5_000; // bytes per second on each port
        long Restore(bool limited, out long viaLane, out long copiedBytes, out long largestSender)
        {
            string root = Path.Combine(_data, limited ? "limited" : "free");
            using var cube = new StoreCube(Cube, dataRoot: root, options: Fast);
            var chunks = WriteChunks(cube);
            var lost = new Coordinate(1, 1, 1);
            if (limited)
            {
                foreach (var server in Cube.All())
                {
                    foreach (var port in Ports.All)
                    {
                        cube.Sim.Host(server).SetRateLimit(WellKnownServices.ReReplication, port, Rate);
                    }
                }
            }
            long killed = cube.Sim.Now;
            cube.Sim.FailServer(lost, killed);
            WaitUntil(cube, () => chunks.All(c => Holders(cube, c.Id).Count(h => h != lost) == ChunkPlacement.Replicas), "three live replicas of every chunk");
            long took = cube.Sim.Now - killed;
            var live = Cube.All().Where(s => s != lost).ToList();
            viaLane = 0;
            foreach (var server in live)
            {
                foreach (var port in Ports.All)
                {
                    viaLane += cube.Sim.Host(server).QueueCounters(WellKnownServices.ReReplication, port).BytesQueued;
                }
            }
            copiedBytes = live.Sum(s => cube.Store(s).Counters.ReplicaBytesCopied);
            largestSender = live.Max(s => cube.Store(s).Counters.ReplicaBytesCopied);
            return took;
        }

        long free = Restore(limited: false, out long lane, out long copied, out _);
        // Every copied byte crossed at least one link in re-replication's own queues.
        Assert.True(copied > 0);
        Assert.True(lane >= copied, $"{lane} bytes through the re-replication queues, {copied} copied");
        long capped = Restore(limited: true, out _, out _, out long largest);
        // A sender's copies leave on at most six ports at the limit each.
        long floor = largest * 1_000_000_000L / (6 * Rate);
        Assert.True(capped - free >= floor, $"restored in {capped / Ms} ms with the limit, {free / Ms} ms without; the limit alone needs {floor / Ms} ms");
    }

    [Fact]
    public void AServerBackAfterItsReplicasWereMadeAgainLeavesEveryChunkHeldThreeTimes()
    {
        using var cube = new StoreCube(Cube, dataRoot: _data, options: Fast);
        var chunks = WriteChunks(cube);
        var away = new Coordinate(2, 0, 1);
        cube.Sim.FailServer(away, cube.Sim.Now);
        cube.Settle(100 * Ms);
        WaitUntil(cube, () => chunks.All(c => Holders(cube, c.Id).Count(h => h != away) == ChunkPlacement.Replicas), "three live replicas of every chunk");
        cube.Sim.RestoreServer(away, cube.Sim.Now);
        cube.Settle(100 * Ms);
        Assert.False(cube.Sim.IsServerFailed(away));
        Assert.Contains(chunks, c => Holders(cube, c.Id).Count > ChunkPlacement.Replicas);
        // Back with its old disk: it holds its share again, and the stand-ins drop theirs.
        WaitUntil(cube, () => chunks.All(c => Holders(cube, c.Id).Count == ChunkPlacement.Replicas), "every chunk held exactly three times");
        var all = ServerSet.AllOf(Cube);
        foreach (var c in chunks)
        {
            Assert.Equal(ChunkPlacement.Targets(KeyMapper.Shared(Cube), c.Id, all).OrderBy(s => s.Name), Holders(cube, c.Id).OrderBy(s => s.Name));
        }
        Assert.True(Cube.All().Sum(s => cube.Store(s).Counters.ReplicasDropped) > 0);

        // Lost again, now for good: the stand-ins dropped their copies, so they must be made again, not taken as held.
        cube.Sim.FailServer(away, cube.Sim.Now);
        cube.Settle(100 * Ms);
        Assert.Contains(chunks, c => Holders(cube, c.Id).Count(h => h != away) < ChunkPlacement.Replicas);
        WaitUntil(cube, () => chunks.All(c => Holders(cube, c.Id).Count(h => h != away) == ChunkPlacement.Replicas), "three live replicas of every chunk after the second loss");
    }

    [Fact]
    public void AServerBackWithAnEmptyDiskReceivesItsShareAgain()
    {
        using var cube = new StoreCube(Cube, dataRoot: _data, options: Fast);
        var chunks = WriteChunks(cube);
        var replaced = new Coordinate(0, 2, 2);
        int share = chunks.Count(c => Holders(cube, c.Id).Contains(replaced));
        Assert.True(share > 0);
        cube.Sim.FailServer(replaced, cube.Sim.Now);
        // Away for 50 ms only: the others learn it is back from their routing, or from its Joined.
        cube.Settle(50 * Ms);
        cube.Sim.RestoreServer(replaced, cube.Sim.Now, wipeData: true);
        cube.Settle(100 * Ms);
        Assert.Equal(0, cube.Store(replaced).Local.Count);
        // Back within the grace, with nothing: the others ask it again what it holds, and send it its share.
        WaitUntil(cube, () => cube.Store(replaced).Local.Count == share, "the replaced server to hold its share");
        foreach (var c in chunks.Where(c => Holders(cube, c.Id).Contains(replaced)))
        {
            Assert.Equal(ReplicaHealth.Good, cube.Store(replaced).Local.Verify(c.Id));
        }
    }

    [Fact]
    public void On8x8x8ALostServersReplicasAreMadeAgain()
    {
        var big = new Torus(8, 8, 8);
        using var cube = new StoreCube(big, dataRoot: _data, options: Fast);
        var lost = new Coordinate(3, 4, 5);
        var ids = new List<Key>();
        for (int i = 0; i < 24; i++)
        {
            // Chunks whose primary is the server about to be lost, or one of its neighbours.
            var id = ChunkPlacement.ChunkId(big, "big", i, nonce: (ulong)big.IndexOf(lost) - 2);
            var bytes = new byte[30_000];
            new Random(i).NextBytes(bytes);
            Assert.True(cube.Write(big.CoordinateOf(i * 17 % big.Count), StoreCube.MetaFor(id, bytes, "big", i, 24), bytes).Ok);
            ids.Add(id);
        }
        bool Restored() => ids.All(id => big.All().Count(s => !cube.Sim.IsServerFailed(s) && cube.Store(s).Local.TryGet(id, out _)) == ChunkPlacement.Replicas);
        int held = ids.Count(id => cube.Store(lost).Local.TryGet(id, out _));
        Assert.True(held > 0);
        cube.Sim.FailServer(lost, cube.Sim.Now);
        cube.Settle(100 * Ms);
        Assert.False(Restored());
        WaitUntil(cube, Restored, "three live replicas of every chunk on 8x8x8");
        Assert.Equal(held, big.All().Where(s => s != lost).Sum(s => cube.Store(s).Counters.ReplicasCopied));
    }

    private sealed record Written(Key Id, byte[] Bytes);

    private static List<Written> WriteChunks(StoreCube cube)
    {
        var written = new List<Written>();
        for (int i = 0; i < Chunks; i++)
        {
            var id = ChunkPlacement.ChunkId(Cube, "kept", i, nonce: 77);
            var bytes = new byte[20_000 + (i * 97)];
            new Random(i).NextBytes(bytes);
            var result = cube.Write(Cube.CoordinateOf(i % Cube.Count), StoreCube.MetaFor(id, bytes, "kept", i, Chunks), bytes);
            Assert.True(result.Ok, result.Error);
            written.Add(new Written(id, bytes));
        }
        return written;
    }

    /// <summary>The servers (alive or not) whose store holds a good replica of <paramref name="id"/>.</summary>
    private static List<Coordinate> Holders(StoreCube cube, Key id) =>
        [.. Cube.All().Where(s => !cube.Sim.IsServerFailed(s) && cube.Store(s).Local.TryGet(id, out var c) && !c.Corrupt)];

    private static void WaitUntil(StoreCube cube, Func<bool> done, string what)
    {
        long deadline = cube.Sim.Now + (120_000 * Ms);
        while (!done() && cube.Sim.Now < deadline)
        {
            cube.Settle(500 * Ms);
        }
        Assert.True(done(), $"not reached after {(cube.Sim.Now - deadline + (120_000 * Ms)) / Ms} ms of simulated time: {what}");
    }
}
