using Camdoop.ChunkStore;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.ChunkStore;

/// <summary>fsck on a simulated cube: each dataset's chunks against the replicas every server reports and the placement.</summary>
public class FsckTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    private static FsckReport Check(StoreCube cube, Coordinate checker, string? dataset = null)
    {
        var result = cube.Fsck(checker, dataset);
        Assert.True(result.Report is not null, result.Error);
        return result.Report!;
    }

    private static void DeleteFiles(StoreCube cube, Coordinate server, ManifestChunk chunk)
    {
        string data = cube.Store(server).Local.DataPath(chunk.Id);
        File.Delete(data);
        File.Delete(Path.ChangeExtension(data, ".meta"));
    }

    [Fact]
    public void AHealthyDatasetHasEveryChunkOnThreeGoodReplicas()
    {
        using var cube = new StoreCube(Cube);
        cube.Put("healthy", 6);
        cube.Put("other", 2, nonce: 5);

        var report = Check(cube, new Coordinate(2, 1, 0));
        Assert.Equal(["healthy", "other"], report.Datasets.Select(d => d.Name));
        Assert.Equal(8, report.Chunks);
        Assert.Equal(24, report.Replicas);
        Assert.Equal(0, report.UnderReplicated);
        Assert.Equal(0, report.Missing);
        Assert.Equal(0, report.Corrupt);
        Assert.Empty(report.Unanswered);
        Assert.Equal(27, report.Answered.Count);
        Assert.Equal(3, report.Required);
        Assert.False(report.Lost);
        Assert.All(report.Datasets, d => Assert.Empty(d.Problems));
        Assert.All(report.Datasets, d => Assert.Equal(3, d.ManifestReplicas));

        var one = Check(cube, new Coordinate(0, 0, 1), "other");
        Assert.Equal("other", Assert.Single(one.Datasets).Name);
        Assert.Equal(2, one.Chunks);
        Assert.Equal(6, one.Replicas);

        var unknown = cube.Fsck(new Coordinate(0, 0, 1), "nothing");
        Assert.Null(unknown.Report);
        Assert.Equal("unknown dataset 'nothing'", unknown.Error);
    }

    [Fact]
    public void AReplicaDeletedOnOneServerAndAStoppedServerLeaveChunksUnderReplicatedAndNamed()
    {
        using var cube = new StoreCube(Cube);
        var chunks = cube.Put("wiki", 9);
        var first = chunks[0];
        var holders = cube.Holders(first.Id);
        Assert.Equal(3, holders.Count);
        DeleteFiles(cube, holders[1], first);

        var report = Check(cube, new Coordinate(1, 1, 1));
        var wiki = Assert.Single(report.Datasets);
        Assert.Equal(9, wiki.Chunks);
        Assert.Equal(26, wiki.Replicas);
        Assert.Equal(1, wiki.UnderReplicated);
        Assert.Equal(0, wiki.Missing);
        var problem = Assert.Single(wiki.Problems);
        Assert.Equal(first.Id, problem.Id);
        Assert.Equal(0, problem.Index);
        Assert.Equal(2, problem.Good);
        Assert.Contains(problem.Replicas, r => r.Server == holders[1] && r.State == ReplicaState.Missing);
        Assert.Equal(holders.Select(c => c.Name).Order(), problem.Placement.Select(c => c.Name).Order());
        Assert.False(report.Lost);

        // A server that holds replicas stops: it is named, and its replicas count as not live.
        var second = chunks[1];
        var stopped = cube.Holders(second.Id).First(c => c != new Coordinate(1, 1, 1) && !holders.Contains(c));
        int itsChunks = chunks.Count(c => cube.Holders(c.Id).Contains(stopped));
        cube.Sim.FailServer(stopped, cube.Sim.Now);
        cube.Settle();

        report = Check(cube, new Coordinate(1, 1, 1));
        wiki = Assert.Single(report.Datasets);
        Assert.Equal([stopped], report.Unanswered);
        Assert.Equal(26, report.Answered.Count);
        Assert.Equal(1 + itsChunks, wiki.UnderReplicated);
        Assert.Equal(26 - itsChunks, wiki.Replicas);
        Assert.Equal(0, wiki.Missing);
        var secondProblem = wiki.Problems.Single(p => p.Id == second.Id);
        Assert.Equal(2, secondProblem.Good);
        Assert.DoesNotContain(secondProblem.Replicas, r => r.Server == stopped);
    }

    [Fact]
    public void AChunkWithEveryReplicaRemovedIsMissingAndACorruptReplicaIsCounted()
    {
        using var cube = new StoreCube(Cube);
        var chunks = cube.Put("wiki", 5);
        var lost = chunks[3];
        foreach (var holder in cube.Holders(lost.Id))
        {
            DeleteFiles(cube, holder, lost);
        }
        // A replica of another chunk found corrupt by a read, whose repair has not happened yet: marked so.
        var damaged = chunks[1];
        var damagedHolder = cube.Holders(damaged.Id)[0];
        Assert.True(cube.Store(damagedHolder).Local.TryGet(damaged.Id, out var replica));
        replica.Corrupt = true;

        var report = Check(cube, new Coordinate(0, 2, 2), "wiki");
        var wiki = Assert.Single(report.Datasets);
        Assert.Equal(5, wiki.Chunks);
        Assert.Equal(1, wiki.Missing);
        Assert.Equal(2, wiki.UnderReplicated); // the lost chunk, and the one with two good replicas of three
        Assert.Equal(1, wiki.Corrupt);
        Assert.Equal(12, wiki.Replicas); // 4 chunks x 3, the corrupt one included
        Assert.True(wiki.Lost);
        Assert.True(report.Lost);
        var missing = wiki.Problems.Single(p => p.Good == 0);
        Assert.Equal(lost.Id, missing.Id);
        Assert.Equal(3, missing.Index);
        Assert.All(missing.Replicas, r => Assert.Equal(ReplicaState.Missing, r.State));
        var corrupt = wiki.Problems.Single(p => p.Id == damaged.Id);
        Assert.Equal(2, corrupt.Good);
        Assert.Contains(corrupt.Replicas, r => r.Server == damagedHolder && r.State == ReplicaState.Corrupt);
    }
}
