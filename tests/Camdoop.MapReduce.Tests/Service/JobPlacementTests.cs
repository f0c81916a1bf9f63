using Camdoop.MapReduce.Service;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.Service;

public sealed class JobPlacementTests
{
    [Theory]
    [InlineData(1)]
    [InlineData(7)]
    [InlineData(64)]
    public void RootsAreDistinctEvenlySpreadAndDeterministic(int reduceTasks)
    {
        var torus = new Torus(4, 4, 4);
        var a = new JobPlacement(torus, 77, reduceTasks);
        var b = new JobPlacement(torus, 77, reduceTasks);
        Assert.Equal(a.RootIndices, b.RootIndices);
        Assert.Equal(reduceTasks, a.RootIndices.Distinct().Count());
        // Consecutive roots are N/R apart (mod N), up to rounding.
        var gaps = a.RootIndices.Zip(a.RootIndices.Skip(1), (x, y) => (y - x + torus.Count) % torus.Count).ToList();
        Assert.All(gaps, g => Assert.InRange(g, torus.Count / reduceTasks, (torus.Count + reduceTasks - 1) / reduceTasks));
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
}
