using Camdoop.ChunkStore;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.ChunkStore;

/// <summary>Deleting a dataset: every replica of its manifest and chunks goes, from every server and its disk; other datasets stay.</summary>
public class DatasetDeleteTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    private static void Put(StoreCube cube, string name, int chunks)
    {
        var entries = new List<ManifestChunk>();
        for (int i = 0; i < chunks; i++)
        {
            var bytes = new byte[1000 + i];
            new Random(i).NextBytes(bytes);
            var meta = StoreCube.MetaFor(ChunkPlacement.ChunkId(Cube, name, i, nonce: 1), bytes, name, i, chunks);
            Assert.True(cube.Write(new Coordinate(1, 1, 1), meta, bytes).Ok);
            entries.Add(new ManifestChunk(meta.Id, meta.Length, meta.Checksum));
        }
        var (m, b) = new DatasetManifest { Name = name, TotalBytes = entries.Sum(e => e.Length), Chunks = entries }.ToChunk();
        Assert.True(cube.Write(new Coordinate(1, 1, 1), m, b).Ok);
    }

    private static int ReplicasOf(StoreCube cube, string name) =>
        Cube.All().Sum(c => cube.Store(c).Local.All.Count(s => s.Meta.Dataset == name));

    [Fact]
    public void EveryReplicaOfTheDatasetIsDeletedAndTheOthersStay()
    {
        using var cube = new StoreCube(Cube);
        Put(cube, "doomed", 4);
        Put(cube, "kept", 2);
        Assert.Equal(15, ReplicasOf(cube, "doomed")); // 4 chunks and the manifest, three replicas each
        long bytes = Cube.All().Sum(c => cube.Store(c).Local.All.Where(s => s.Meta.Dataset == "doomed").Sum(s => s.Meta.Length));
        var files = Cube.All().SelectMany(c => cube.Store(c).Local.All.Where(s => s.Meta.Dataset == "doomed").Select(s => s.DataPath)).ToList();
        Assert.All(files, f => Assert.True(File.Exists(f)));

        DeleteResult? result = null;
        cube.Store(new Coordinate(2, 0, 1)).DeleteDataset("doomed", r => result = r);
        Assert.True(cube.Sim.RunUntil(() => result is not null, cube.Sim.Now + (30_000 * StoreCube.Ms)), "the delete did not finish");

        Assert.Equal(15, result!.Deleted);
        Assert.Equal(bytes, result.Bytes);
        Assert.True(bytes > 3 * ((4 * 1000) + 6), "the manifest's replicas are counted too");
        Assert.Empty(result.Unanswered);
        Assert.Equal(27, result.ServersAsked);
        Assert.Equal(0, ReplicasOf(cube, "doomed"));
        Assert.Equal(9, ReplicasOf(cube, "kept"));
        Assert.All(files, f => Assert.False(File.Exists(f), f));
        Assert.All(files, f => Assert.False(File.Exists(Path.ChangeExtension(f, ".meta")), f));
        Assert.Equal(["kept"], cube.List(new Coordinate(0, 0, 0)).Manifests.Select(m => m.Dataset));
        Assert.True(cube.Read(new Coordinate(0, 2, 2), ChunkPlacement.ManifestId("doomed")).NotFound);

        // Deleting it again finds nothing to delete.
        result = null;
        cube.Store(new Coordinate(0, 0, 0)).DeleteDataset("doomed", r => result = r);
        Assert.True(cube.Sim.RunUntil(() => result is not null, cube.Sim.Now + (30_000 * StoreCube.Ms)));
        Assert.Equal(0, result!.Deleted);
    }
}
