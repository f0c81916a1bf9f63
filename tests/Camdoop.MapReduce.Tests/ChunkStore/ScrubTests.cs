using Camdoop.ChunkStore;
using Camdoop.Records;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.ChunkStore;

/// <summary>The scrubber: every replica re-read in the background at a bounded rate; a corrupt one repaired before any read meets it.</summary>
public class ScrubTests
{
    private static readonly Torus Cube = new(3, 3, 3);
    private const long Ms = StoreCube.Ms;

    private static byte[] Bytes(int length, int seed)
    {
        var bytes = new byte[length];
        new Random(seed).NextBytes(bytes);
        return bytes;
    }

    private static void FlipByte(string path, long at)
    {
        using var file = new FileStream(path, FileMode.Open, FileAccess.ReadWrite);
        file.Position = at;
        int b = file.ReadByte();
        file.Position = at;
        file.WriteByte((byte)(b ^ 0x5A));
    }

    [Fact]
    public void ACorruptReplicaIsFoundAndRepairedFromAGoodOneBeforeAnyRead()
    {
        var options = new ChunkStoreOptions { ScrubInterval = 10_000 * Ms, ScrubBytesPerSecond = 20_000_000 };
        using var cube = new StoreCube(Cube, options: options);
        var id = ChunkPlacement.ChunkId(Cube, "scrubbed", 3, nonce: 21);
        var bytes = Bytes(300_000, 7);
        var meta = StoreCube.MetaFor(id, bytes, "scrubbed");
        var write = cube.Write(new Coordinate(2, 2, 2), meta, bytes);
        Assert.True(write.Ok, write.Error);
        var victim = write.Replicas[1];
        var store = cube.Store(victim);
        Assert.True(store.Local.TryGet(id, out var replica));
        FlipByte(replica.DataPath, 200_001);
        Assert.NotEqual(meta.Checksum, XxHash64.Hash(File.ReadAllBytes(replica.DataPath)));
        Assert.Equal(0, store.Counters.ScrubPasses); // the first pass has not begun: it is the one that must find it

        Assert.True(cube.Sim.RunUntil(() => store.Counters.ScrubRepaired > 0, cube.Sim.Now + (60_000 * Ms)), "the scrubber never repaired the replica");

        Assert.Equal(1, store.Counters.ScrubCorrupt);
        Assert.Equal(1, store.Counters.ScrubRepaired);
        Assert.Equal(0, store.Counters.ScrubUnrepairable);
        Assert.Equal(bytes, File.ReadAllBytes(store.Local.DataPath(id)));
        Assert.Equal(meta.Checksum, XxHash64.Hash(File.ReadAllBytes(store.Local.DataPath(id))));
        Assert.True(store.Local.TryGet(id, out var repaired));
        Assert.Equal(ReplicaState.Good, repaired.State);
        // No read met the corrupt replica: the scrubber got there first.
        Assert.Equal(0, Cube.All().Sum(c => cube.Store(c).Counters.CorruptDetected));
        // The other replicas were good, and the scrubbers found nothing else.
        Assert.Equal(1, Cube.All().Sum(c => cube.Store(c).Counters.ScrubCorrupt));

        // Every server finishes its pass and records when; the passes check every replica held.
        Assert.True(cube.Sim.RunUntil(() => Cube.All().All(c => cube.Store(c).Counters.ScrubPasses > 0), cube.Sim.Now + (60_000 * Ms)));
        Assert.True(Cube.All().All(c => cube.Store(c).Counters.ScrubLastPassEnd > 0));
        Assert.True(Cube.All().Sum(c => cube.Store(c).Counters.ScrubChunks) >= 3);
        Assert.True(store.Counters.ScrubBytes >= bytes.Length);
    }

    [Fact]
    public void On8x8x8ACorruptReplicaIsFoundAndRepairedByTheScrubber()
    {
        var big = new Torus(8, 8, 8);
        var options = new ChunkStoreOptions { ScrubInterval = 10_000 * Ms, ScrubBytesPerSecond = 20_000_000 };
        using var cube = new StoreCube(big, options: options);
        var id = ChunkPlacement.ChunkId(big, "scrubbed", 0, nonce: 88);
        var bytes = Bytes(200_000, 9);
        var meta = StoreCube.MetaFor(id, bytes, "scrubbed");
        var write = cube.Write(new Coordinate(7, 7, 7), meta, bytes);
        Assert.True(write.Ok, write.Error);
        var store = cube.Store(write.Replicas[2]);
        Assert.True(store.Local.TryGet(id, out var replica));
        FlipByte(replica.DataPath, 123_456);

        Assert.True(cube.Sim.RunUntil(() => store.Counters.ScrubRepaired > 0, cube.Sim.Now + (60_000 * Ms)), "the scrubber never repaired the replica");

        Assert.Equal(1, big.All().Sum(c => cube.Store(c).Counters.ScrubCorrupt));
        Assert.Equal(0, big.All().Sum(c => cube.Store(c).Counters.CorruptDetected));
        Assert.Equal(meta.Checksum, XxHash64.Hash(File.ReadAllBytes(store.Local.DataPath(id))));
    }

    [Fact]
    public void AReplicaWhoseFileIsGoneIsRestoredAndOneWithNoGoodCopyIsCountedUnrepairable()
    {
        var options = new ChunkStoreOptions { ScrubInterval = 5_000 * Ms };
        using var cube = new StoreCube(Cube, options: options);
        var gone = ChunkPlacement.ChunkId(Cube, "gone", 0, nonce: 3);
        var goneBytes = Bytes(40_000, 1);
        var write = cube.Write(new Coordinate(0, 0, 0), StoreCube.MetaFor(gone, goneBytes, "gone"), goneBytes);
        Assert.True(write.Ok, write.Error);
        var loser = cube.Store(write.Replicas[2]);
        File.Delete(loser.Local.DataPath(gone));

        var lost = ChunkPlacement.ChunkId(Cube, "lost", 0, nonce: 4);
        var lostBytes = Bytes(40_000, 2);
        write = cube.Write(new Coordinate(0, 0, 0), StoreCube.MetaFor(lost, lostBytes, "lost"), lostBytes);
        Assert.True(write.Ok, write.Error);
        foreach (var holder in write.Replicas)
        {
            FlipByte(cube.Store(holder).Local.DataPath(lost), 10);
        }

        Assert.True(cube.Sim.RunUntil(() => loser.Counters.ScrubRepaired > 0 && Cube.All().Sum(c => cube.Store(c).Counters.ScrubUnrepairable) >= 3, cube.Sim.Now + (60_000 * Ms)));
        Assert.Equal(goneBytes, File.ReadAllBytes(loser.Local.DataPath(gone)));
        // All three copies of "lost" are bad: each holder finds its own, none can be repaired, none is served.
        foreach (var holder in write.Replicas)
        {
            Assert.True(cube.Store(holder).Local.TryGet(lost, out var bad));
            Assert.Equal(ReplicaState.Corrupt, bad.State);
        }
        var read = cube.Read(new Coordinate(1, 1, 1), lost);
        Assert.False(read.Ok);
    }

    [Fact]
    public void TheScrubberReadsNoFasterThanItsRate()
    {
        const long rate = 1_000_000;
        const int chunkBytes = 250_000;
        var options = new ChunkStoreOptions { ScrubInterval = 2_000 * Ms, ScrubBytesPerSecond = rate };
        using var cube = new StoreCube(Cube, options: options);
        // Chunks 0, 27, 54, ... of a dataset all have the same primary: that server holds 3 MB, three seconds of scrubbing.
        for (int i = 0; i < 12; i++)
        {
            var id = ChunkPlacement.ChunkId(Cube, "paced", i * Cube.Count, nonce: 0);
            var bytes = Bytes(chunkBytes, i);
            Assert.True(cube.Write(new Coordinate(1, 1, 1), StoreCube.MetaFor(id, bytes, "paced", i * Cube.Count, 12 * Cube.Count), bytes).Ok);
        }
        var primary = Cube.CoordinateOf(0);
        var store = cube.Store(primary);
        long held = store.Local.BytesStored;
        Assert.True(held >= 12L * chunkBytes, $"{primary} holds {held} bytes");

        // Sample the bytes scrubbed every 20 ms of simulated time through the first pass and past its end.
        var samples = new List<(long Time, long Bytes)>();
        long end = cube.Sim.Now + (12_000 * Ms);
        while (cube.Sim.Now < end)
        {
            samples.Add((cube.Sim.Now, store.Counters.ScrubBytes));
            cube.Sim.RunUntil(cube.Sim.Now + (20 * Ms));
        }
        Assert.True(store.Counters.ScrubPasses >= 1, "the first pass did not end");
        Assert.True(store.Counters.ScrubBytes >= held, "the pass did not check every byte held");
        for (int i = 0; i < samples.Count; i++)
        {
            for (int j = i + 1; j < samples.Count; j++)
            {
                double seconds = (samples[j].Time - samples[i].Time) / 1e9;
                long scrubbed = samples[j].Bytes - samples[i].Bytes;
                Assert.True(scrubbed <= (rate * seconds) + chunkBytes, $"{scrubbed} bytes scrubbed in {seconds:0.###} s at {rate} B/s");
            }
        }
        // And it does not dawdle: the pass over 3 MB took about 3 s, not much more.
        var first = samples.First(s => s.Bytes > 0);
        var done = samples.First(s => s.Bytes >= held);
        Assert.True((done.Time - first.Time) / 1e9 < (held / (double)rate) + 1, $"the pass took {(done.Time - first.Time) / 1e9:0.##} s");
    }
}
