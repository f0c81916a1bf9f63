using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.ChunkStore;

/// <summary>
/// A dataset removed while a server was away stays removed when the server comes back with its replicas: it drops
/// them on the tombstone, nothing copies them back, and a dataset stored meanwhile (one under the removed one's name
/// among them) is complete and held exactly three times.
/// </summary>
public sealed class TombstoneTests : IDisposable
{
    private static readonly Torus Cube = new(3, 3, 3);
    private const long Ms = StoreCube.Ms;

    private static readonly ChunkStoreOptions Fast = StoreCube.KeepingReplicas;

    private readonly string _data = Directory.CreateTempSubdirectory("camdoop-tombstones-").FullName;

    public void Dispose() => Directory.Delete(_data, recursive: true);

    [Theory]
    [InlineData(1_000)] // back within the grace: nothing was made again
    [InlineData(6_000)] // back after the grace: its replicas were made again, and the copies of the new data moved to it
    public void ADatasetRemovedWhileAServerWasAwayStaysRemoved(long awayMs)
    {
        using var cube = new StoreCube(Cube, dataRoot: _data, options: Fast);
        var origin = new Coordinate(0, 0, 0);
        var removed = cube.Put("logs", chunks: 24, nonce: 1);
        var manifestId = ChunkPlacement.ManifestId("logs");
        // Away: a server that holds replicas of the dataset about to be removed.
        var away = Cube.All().Where(s => s != origin).OrderByDescending(s => removed.Count(c => cube.Holders(c.Id).Contains(s))).First();
        int held = removed.Count(c => cube.Store(away).Local.TryGet(c.Id, out _));
        Assert.True(held > 0);
        cube.Settle(1_500 * Ms); // past the start delay, so re-replication runs on every server
        cube.Sim.FailServer(away, cube.Sim.Now);
        cube.Settle(300 * Ms);

        var delete = cube.Delete(origin, "logs");
        Assert.Empty(delete.Unanswered);
        Assert.True(delete.Deleted > 0);
        Assert.Contains(Cube.All(), s => s != away && cube.Store(s).Tombstones.Any(t => t.Name == "logs" && t.Pending.Contains(Cube.IndexOf(away))));
        Assert.NotEmpty(TombstoneFiles());
        // Stored while it is away: a new dataset, and a new one under the removed one's name.
        var fresh = cube.Put("fresh", chunks: 16, nonce: 5);
        var again = cube.Put("logs", chunks: 10, chunkBytes: 3_000, nonce: 2);
        // The remover restarts meanwhile: its tombstone is read back from its disk.
        cube.Sim.FailServer(origin, cube.Sim.Now);
        cube.Settle(100 * Ms);
        cube.Sim.RestoreServer(origin, cube.Sim.Now);
        cube.Settle(100 * Ms);
        Assert.Contains(cube.Store(origin).Tombstones, t => t.Name == "logs" && t.Pending.SetEquals([Cube.IndexOf(away)]));
        cube.Settle(awayMs * Ms);
        cube.Sim.RestoreServer(away, cube.Sim.Now);

        var kept = fresh.Concat(again).Select(c => c.Id).Append(manifestId).Append(ChunkPlacement.ManifestId("fresh")).ToList();
        var all = ServerSet.AllOf(Cube);
        bool Settled() =>
            removed.All(c => cube.Holders(c.Id).Count == 0)
            && kept.All(id => cube.Holders(id).OrderBy(s => s.Name).SequenceEqual(ChunkPlacement.Targets(KeyMapper.Shared(Cube), id, all).OrderBy(s => s.Name)))
            && Cube.All().All(s => !cube.Store(s).Tombstones.Any());
        long deadline = cube.Sim.Now + (60_000 * Ms);
        while (!Settled() && cube.Sim.Now < deadline)
        {
            cube.Settle(500 * Ms);
        }

        Assert.All(removed, c => Assert.Empty(cube.Holders(c.Id)));
        Assert.All(kept, id => Assert.Equal(ChunkPlacement.Replicas, cube.Holders(id).Count));
        Assert.True(Settled(), "every kept chunk held exactly at its three positions, and every tombstone applied and dropped");
        Assert.True(cube.Store(away).Counters.TombstoneReplicasDropped >= held);
        Assert.Empty(TombstoneFiles());
        // The name holds the dataset stored again, read whole from the server that was away.
        var manifest = cube.Read(away, manifestId);
        Assert.True(manifest.Ok, manifest.Error);
        Assert.Equal(again.Select(c => c.Id), DatasetManifest.Decode(manifest.Bytes).Chunks.Select(c => c.Id));
        foreach (var c in again.Concat(fresh))
        {
            var read = cube.Read(away, c.Id);
            Assert.True(read.Ok, read.Error);
            Assert.Equal(c.Checksum, read.Meta!.Checksum);
        }
    }

    /// <summary>The tombstone files kept in every server's data directory.</summary>
    private List<string> TombstoneFiles() =>
        [.. Directory.EnumerateFiles(_data, "*", SearchOption.AllDirectories).Where(f => Path.GetFileName(Path.GetDirectoryName(f)) == "tombstones")];
}
