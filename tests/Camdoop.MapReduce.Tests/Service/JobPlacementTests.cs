using Camdoop.MapReduce.Service;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.Service;

public sealed class JobPlacementTests
{
    [Theory]
    [InlineData("4x4x4", 1, 0)]
    [InlineData("4x4x4", 7, 2)]
    [InlineData("4x4x4", 8, 2)]
    [InlineData("4x4x4", 64, 1)]
    [InlineData("8x8x8", 8, 4)]
    [InlineData("8x8x8", 64, 2)]
    [InlineData("8x8x8", 512, 1)]
    [InlineData("3x4x5", 20, 1)]
    public void RootsAreDistinctSpreadOverTheCubeAndDeterministic(string size, int reduceTasks, int minimumSpacing)
    {
        var torus = Torus.Parse(size);
        var a = new JobPlacement(torus, 77, reduceTasks);
        var b = new JobPlacement(torus, 77, reduceTasks);
        Assert.Equal(a.RootIndices, b.RootIndices);
        Assert.Equal(reduceTasks, a.RootIndices.Distinct().Count());
        // No two roots closer than a lattice of R points would put them (8 on 8x8x8: 4 hops; 64: 2 hops).
        var roots = a.RootIndices.Select(torus.CoordinateOf).ToList();
        int closest = roots.SelectMany((x, i) => roots.Skip(i + 1).Select(y => torus.Distance(x, y))).DefaultIfEmpty(0).Min();
        Assert.True(closest >= minimumSpacing, $"two of {reduceTasks} roots on {size} are {closest} hops apart");
        // Another job lands elsewhere (the rotation is a hash of the job id).
        var others = Enumerable.Range(1, 20).Select(j => new JobPlacement(torus, (ulong)j, 1).RootIndex(0)).Distinct().Count();
        Assert.True(others > 5);
    }

    [Fact]
    public void GetParentWrapsTheTreesOverVertexIdsAndMapTaskIds()
    {
        var torus = new Torus(3, 3, 3);
        var placement = new JobPlacement(torus, 5, 3);
        var trees = new TreeTopology(torus);
        for (int r = 0; r < 3; r++)
        {
            var rootId = placement.RootId(r);
            Assert.Equal(placement.Root(r), placement.CoordinateOf(rootId));
            for (int t = 0; t < TreeTopology.TreeCount; t++)
            {
                Assert.Null(placement.GetParent(rootId, rootId, t));
                foreach (var c in torus.All())
                {
                    var vertex = placement.VertexId(c);
                    Assert.True(placement.IsVertexId(vertex));
                    Assert.Equal(c, placement.CoordinateOf(vertex));
                    var parent = placement.GetParent(rootId, vertex, t);
                    var expected = trees.GetParent(placement.Root(r), c, t);
                    Assert.Equal(expected is null ? null : placement.VertexId(expected.Value), parent);
                    // A map task's parent is the vertex on its own server.
                    var mapTask = JobPlacement.MapTaskId(torus, c, "chunk-" + c);
                    Assert.False(placement.IsVertexId(mapTask));
                    Assert.Equal(vertex, placement.GetParent(rootId, mapTask, t));
                }
            }
        }
    }

    [Theory]
    [InlineData("3x3x3")]
    [InlineData("4x4x4")]
    [InlineData("8x8x8")]
    [InlineData("3x4x5")]
    public void SpreadOverEveryServerFromAJobsStartBeginsWithItsDefaultRoots(string size)
    {
        var torus = Torus.Parse(size);
        int n = torus.Count;
        foreach (ulong job in new ulong[] { 3, 77, 0xCA3D_0000_0000_0001UL })
        {
            int start = JobPlacement.SpreadStart(torus, job);
            var order = JobPlacement.Spread(torus, Enumerable.Range(0, n).Select(k => (start + k) % n).ToList(), n);
            Assert.Equal(n, order.Distinct().Count());
            foreach (int r in new[] { 1, 2, 7, n / 2, n - 1 })
            {
                Assert.Equal(new JobPlacement(torus, job, r).RootIndices, order[..r]);
            }
        }
    }

    [Fact]
    public void PlacedRootsAreKeptAndASpreadStaysWithinItsCandidates()
    {
        var torus = new Torus(4, 4, 4);
        var placement = new JobPlacement(torus, 9, 3, roots: [5, 40, 17]);
        Assert.Equal([5, 40, 17], placement.RootIndices);
        Assert.Equal(torus.CoordinateOf(40), placement.Root(1));
        Assert.Throws<ArgumentException>(() => new JobPlacement(torus, 9, 3, roots: [5, 5, 17]));
        Assert.Throws<ArgumentException>(() => new JobPlacement(torus, 9, 2, roots: [5, 64]));

        var half = Enumerable.Range(0, 64).Where(i => i % 2 == 1).ToList();
        var spread = JobPlacement.Spread(torus, half, 8);
        Assert.Equal(half[0], spread[0]);
        Assert.All(spread, s => Assert.Contains(s, half));
        Assert.Equal(8, spread.Distinct().Count());
    }
}
