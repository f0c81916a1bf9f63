using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.ChunkStore;

public class ChunkStoreServiceTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    private static byte[] Bytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    [Fact]
    public void AWriteStoresThreeReplicasAtThePrimaryAndTwoNeighboursOverDifferentLinks()
    {
        using var cube = new StoreCube(Cube);
        var writer = new Coordinate(0, 0, 0);
        var id = ChunkPlacement.ChunkId(Cube, "ds", 5, nonce: 42);
        var bytes = Bytes(100_000, 1);
        var meta = StoreCube.MetaFor(id, bytes);

        // Ack means durable: when the write reports success, every replica it names is committed on disk.
        var committedAtAck = new List<bool>();
        WriteResult? result = null;
        cube.Store(writer).Write(meta, bytes, r =>
        {
            result = r;
            committedAtAck.AddRange(r.Replicas.Select(c => cube.Store(c).Local.TryGet(id, out var s) && File.Exists(s.DataPath)));
        });
        Assert.True(cube.Sim.RunUntil(() => result is not null, 60_000 * StoreCube.Ms));
        Assert.True(result!.Ok, result.Error);
        Assert.All(committedAtAck, Assert.True);

        var primary = KeyMapper.Shared(Cube).Owner(id, ServerSet.AllOf(Cube));
        Assert.Equal(Cube.CoordinateOf(5 + (int)(42 % 27)), primary);
        Assert.Equal(3, result.Replicas.Count);
        Assert.Equal(primary, result.Replicas[0]);
        var ports = result.Replicas.Skip(1).Select(r => Cube.PortTo(primary, r)).ToList();
        Assert.All(ports, p => Assert.NotNull(p));
        Assert.NotEqual(ports[0], ports[1]);
        foreach (var c in Cube.All())
        {
            bool holds = cube.Store(c).Local.TryGet(id, out var stored);
            Assert.Equal(result.Replicas.Contains(c), holds);
            if (holds)
            {
                Assert.Equal(bytes, File.ReadAllBytes(stored.DataPath));
            }
        }
    }

    [Fact]
    public void ReadsReturnTheExactBytesFromAnyServerAndMissingChunksAreNotFound()
    {
        using var cube = new StoreCube(Cube);
        var id = ChunkPlacement.ChunkId(Cube, "ds", 0, nonce: 7);
        var bytes = Bytes(50_000, 2);
        Assert.True(cube.Write(new Coordinate(1, 1, 1), StoreCube.MetaFor(id, bytes), bytes).Ok);
        foreach (var reader in new[] { new Coordinate(2, 2, 2), new Coordinate(0, 0, 0) })
        {
            var read = cube.Read(reader, id);
            Assert.True(read.Ok, read.Error);
            Assert.Equal(bytes, read.Bytes);
            Assert.Equal(0, read.Repairs);
        }
        var missing = cube.Read(new Coordinate(0, 1, 2), ChunkPlacement.ChunkId(Cube, "nothing", 0, 1));
        Assert.False(missing.Ok);
        Assert.True(missing.NotFound, missing.Error);
    }

    [Fact]
    public void LossyLinksAreRecoveredAndTheBytesStayExact()
    {
        using var cube = new StoreCube(Cube, lossRate: 0.03, seed: 3);
        var id = ChunkPlacement.ChunkId(Cube, "lossy", 3, nonce: 9);
        var bytes = Bytes(3_000_000, 3);
        var write = cube.Write(new Coordinate(0, 0, 0), StoreCube.MetaFor(id, bytes), bytes);
        Assert.True(write.Ok, write.Error);
        var read = cube.Read(new Coordinate(2, 1, 0), id);
        Assert.True(read.Ok, read.Error);
        Assert.Equal(bytes, read.Bytes);
        Assert.True(cube.Sim.LinkTotals.Drops > 0, "the links dropped nothing: the test proves nothing");
        long recoveries = Cube.All().Sum(c => cube.Store(c).Counters.Timeouts + cube.Store(c).Counters.FastRetransmits);
        Assert.True(recoveries > 0);
    }

    [Fact]
    public void ACorruptReplicaIsDetectedOnReadAndRepairedFromAnother()
    {
        using var cube = new StoreCube(Cube);
        var id = ChunkPlacement.ChunkId(Cube, "corrupt", 1, nonce: 11);
        var bytes = Bytes(200_000, 4);
        var write = cube.Write(new Coordinate(0, 0, 0), StoreCube.MetaFor(id, bytes), bytes);
        Assert.True(write.Ok, write.Error);
        var primary = write.Replicas[0];
        Assert.True(cube.Store(primary).Local.TryGet(id, out var replica));
        using (var file = new FileStream(replica.DataPath, FileMode.Open, FileAccess.ReadWrite))
        {
            file.Position = 123_456;
            int b = file.ReadByte();
            file.Position = 123_456;
            file.WriteByte((byte)(b ^ 0x40));
        }

        var reader = Cube.All().First(c => !write.Replicas.Contains(c));
        var read = cube.Read(reader, id);
        Assert.True(read.Ok, read.Error);
        Assert.Equal(bytes, read.Bytes);
        Assert.NotEqual(primary, read.From);
        Assert.Equal(1, read.Repairs);
        Assert.Equal(1, cube.Store(primary).Counters.CorruptDetected);
        cube.Settle();
        Assert.Equal(1, cube.Store(primary).Counters.RepairsCompleted);
        Assert.Equal(bytes, File.ReadAllBytes(replica.DataPath));
        Assert.Equal(ReplicaHealth.Good, cube.Store(primary).Local.Verify(id));
    }

    [Fact]
    public void AMissingReplicaIsRestoredByTheNextRead()
    {
        using var cube = new StoreCube(Cube);
        var id = ChunkPlacement.ChunkId(Cube, "missing", 2, nonce: 12);
        var bytes = Bytes(30_000, 5);
        var write = cube.Write(new Coordinate(1, 0, 0), StoreCube.MetaFor(id, bytes), bytes);
        Assert.True(write.Ok, write.Error);
        var victim = write.Replicas[1];
        Assert.True(cube.Store(victim).Local.TryGet(id, out var replica));
        File.Delete(replica.DataPath);

        var read = cube.Read(victim, id);
        Assert.True(read.Ok, read.Error);
        Assert.Equal(bytes, read.Bytes);
        Assert.Equal(1, read.Repairs);
        Assert.Equal(bytes, File.ReadAllBytes(replica.DataPath));
    }

    [Fact]
    public void AWriteSucceedsWithTheLiveReplicasWhenAReplicaServerIsDown()
    {
        using var cube = new StoreCube(Cube);
        var id = ChunkPlacement.ChunkId(Cube, "degraded", 4, nonce: 13);
        var healthy = ChunkPlacement.Targets(KeyMapper.Shared(Cube), id, ServerSet.AllOf(Cube));
        cube.Sim.FailServer(healthy[2], cube.Sim.Now);
        cube.Settle(3_000 * StoreCube.Ms);
        var bytes = Bytes(20_000, 6);
        var write = cube.Write(healthy[0], StoreCube.MetaFor(id, bytes), bytes);
        Assert.True(write.Ok, write.Error);
        Assert.DoesNotContain(healthy[2], write.Replicas);
        Assert.Equal(3, write.Replicas.Count); // the next server in line takes the dead one's place
        Assert.Equal(healthy[0], write.Replicas[0]);
        Assert.Equal(healthy[1], write.Replicas[1]);
    }

    [Fact]
    public void ListingFindsEveryManifestOnceFromAnyServer()
    {
        using var cube = new StoreCube(Cube);
        var names = new[] { "alpha", "beta", "gamma.v2" };
        foreach (var name in names)
        {
            var manifest = new DatasetManifest
            {
                Name = name,
                TotalBytes = 10,
                Chunks = [new ManifestChunk(ChunkPlacement.ChunkId(Cube, name, 0, 1), 10, 99)],
            };
            var (meta, bytes) = manifest.ToChunk();
            Assert.True(cube.Write(new Coordinate(2, 0, 1), meta, bytes).Ok);
        }
        var list = cube.List(new Coordinate(1, 2, 1));
        Assert.Equal(names, list.Manifests.Select(m => m.Dataset));
        Assert.All(list.Manifests, m => Assert.Equal(1, m.Count));
        Assert.Empty(list.Unanswered);
        Assert.Equal(27, list.ServersAsked);
    }

    [Fact]
    public void GarbageFramesAreCountedAndDropped()
    {
        using var cube = new StoreCube(Cube);
        var target = new Coordinate(1, 1, 1);
        var host = cube.Sim.Host(target);
        byte[][] garbage =
        [
            [],
            [0x77, 1, 2, 3, 4, 5, 6, 7, 8],
            [(byte)ChunkMessage.Offer, 0, 0, 0, 0, 0, 0, 0, 1, 0, 9, 9],
            [(byte)ChunkMessage.Ack, 0, 0, 0, 0, 0, 0, 0, 1, 0xff],
            [(byte)ChunkMessage.ListReply, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 5],
        ];
        foreach (var g in garbage)
        {
            var header = new FrameHeader(WellKnownServices.ChunkStore, target, target);
            host.DeliverLocal(ref header, default, g);
        }
        cube.Settle(10 * StoreCube.Ms);
        Assert.Equal(garbage.Length, cube.Store(target).Counters.Malformed);
        // Still works.
        var id = ChunkPlacement.ChunkId(Cube, "after", 0, 1);
        var bytes = Bytes(1000, 7);
        Assert.True(cube.Write(target, StoreCube.MetaFor(id, bytes), bytes).Ok);
    }
}
