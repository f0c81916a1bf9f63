using Camdoop.FrontEnd.Wire;

namespace Camdoop.MapReduce.Tests.FrontEnd;

/// <summary>The "fsck" operation through a real front-end: one server with no links, which holds every chunk itself.</summary>
public class FrontEndFsckTests
{
    [Fact]
    public void FsckCountsTheChunksAndNamesTheOneWhoseOnlyReplicaIsGone()
    {
        using var frontEnd = new OneServerFrontEnd();
        using var client = frontEnd.Connect();
        var bytes = Enumerable.Range(0, 3000).Select(i => (byte)(i * 7)).ToArray();
        var ids = OneServerFrontEnd.Put(client, "wiki", bytes, chunkBytes: 1000, partBytes: 400);
        Assert.Equal(3, ids.Count);

        var healthy = client.Call(new FsckRequest());
        Assert.Equal(3, healthy.Chunks);
        Assert.Equal(3, healthy.Replicas);
        Assert.Equal(0, healthy.UnderReplicated);
        Assert.Equal(0, healthy.Missing);
        Assert.Equal(0, healthy.Corrupt);
        // The cube is 2x2x2 with no links: the server alone answers, so one good replica is all a chunk can have.
        Assert.Equal(1, healthy.LiveServers);
        Assert.Equal(1, healthy.Required);
        Assert.Equal(7, healthy.Unanswered.Count);
        var wiki = Assert.Single(healthy.Datasets);
        Assert.Equal("wiki", wiki.Name);
        Assert.Empty(wiki.Problems);
        Assert.Equal(1, wiki.ManifestReplicas);

        File.Delete(Path.Combine(frontEnd.ChunksDirectory, ids[1] + ".data"));
        var broken = client.Call(new FsckRequest { Name = "wiki" });
        Assert.Equal(3, broken.Chunks);
        Assert.Equal(2, broken.Replicas);
        Assert.Equal(1, broken.Missing);
        Assert.Equal(1, broken.UnderReplicated);
        var problem = Assert.Single(Assert.Single(broken.Datasets).Problems);
        Assert.Equal(ids[1], problem.Chunk);
        Assert.Equal(1, problem.Index);
        Assert.Equal(0, problem.Good);
        Assert.Equal("missing", Assert.Single(problem.Replicas).State);
        Assert.Equal(["0,0,0"], problem.Placement);

        var unknown = Assert.Throws<FrontEndException>(() => client.Call(new FsckRequest { Name = "nope" }));
        Assert.Contains("unknown dataset 'nope'", unknown.Message, StringComparison.Ordinal);
    }
}
