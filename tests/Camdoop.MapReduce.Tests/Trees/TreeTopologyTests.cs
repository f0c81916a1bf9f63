using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.Trees;

public class TreeTopologyTests
{
    public static TheoryData<string, TreeFamily> Sizes
    {
        get
        {
            var data = new TheoryData<string, TreeFamily>();
            foreach (var size in new[] { "3x3x3", "4x4x4", "8x8x8", "3x4x5", "2x3x4", "2x2x2", "6x4x2" })
            {
                data.Add(size, TreeFamily.Shallow);
                data.Add(size, TreeFamily.Paper);
            }
            return data;
        }
    }

    [Theory]
    [MemberData(nameof(Sizes))]
    public void EveryNonRootServerHasOneOneHopParentPerTreeAndReachesTheRoot(string size, TreeFamily family)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus, family);
        foreach (var root in SampleRoots(torus))
        {
            foreach (var c in torus.All())
            {
                for (int t = 0; t < TreeTopology.TreeCount; t++)
                {
                    var parent = trees.GetParent(root, c, t);
                    if (c == root)
                    {
                        Assert.Null(parent);
                        continue;
                    }
                    Assert.NotNull(parent);
                    Assert.Equal(1, torus.Distance(c, parent.Value));
                    // Depth throws on a cycle; it must also be bounded by the number of servers.
                    Assert.InRange(trees.Depth(root, c, t), 1, torus.Count - 1);
                }
            }
        }
    }

    [Theory]
    [MemberData(nameof(Sizes))]
    public void TheSixTreesAreDisjointOnDirectedLinks(string size, TreeFamily family)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus, family);
        foreach (var root in SampleRoots(torus))
        {
            foreach (var c in torus.All())
            {
                var used = new int[Ports.Count];
                for (int t = 0; t < TreeCount; t++)
                {
                    if (trees.ParentPort(root, c, t) is { } port)
                    {
                        used[(int)port]++;
                    }
                }
                if (c == root)
                {
                    Assert.All(used, u => Assert.Equal(0, u));
                }
                else
                {
                    // Each outbound link carries exactly one tree.
                    Assert.All(used, u => Assert.Equal(1, u));
                }
            }
        }
    }

    [Theory]
    [MemberData(nameof(Sizes))]
    public void ChildPortsAreTheExactInverseOfParents(string size, TreeFamily family)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus, family);
        var root = torus.CoordinateOf(torus.Count / 3);
        Span<Port> children = stackalloc Port[Ports.Count];
        for (int t = 0; t < TreeTopology.TreeCount; t++)
        {
            int edges = 0;
            foreach (var c in torus.All())
            {
                int n = trees.GetChildPorts(root, c, t, children);
                edges += n;
                for (int i = 0; i < n; i++)
                {
                    var child = torus.Neighbour(c, children[i]);
                    Assert.Equal(children[i].Opposite(), trees.ParentPort(root, child, t));
                }
            }
            // A spanning in-tree has exactly N-1 edges.
            Assert.Equal(torus.Count - 1, edges);
        }
    }

    [Theory]
    [InlineData("3x3x3", 3.73)]
    [InlineData("8x8x8", 10.77)]
    public void ThePaperTreesAverageDepthMatchesTheDesign(string size, double expected)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus, TreeFamily.Paper);
        Assert.Equal(expected, trees.AverageDepth(torus.CoordinateOf(0)), 2);
    }

    [Theory]
    [InlineData("3x3x3")]
    [InlineData("4x4x4")]
    [InlineData("8x8x8")]
    [InlineData("3x4x5")]
    [InlineData("6x6x6")]
    public void ShallowTreesAreNeverDeeperThanThePapersAndNeverBelowTheShortestPathBound(string size)
    {
        var torus = Torus.Parse(size);
        var root = torus.CoordinateOf(torus.Count / 2);
        var shallow = new TreeTopology(torus, TreeFamily.Shallow);
        var paper = new TreeTopology(torus, TreeFamily.Paper);
        Assert.True(shallow.AverageDepth(root) < paper.AverageDepth(root), $"{size}: {shallow.AverageDepth(root)} vs {paper.AverageDepth(root)}");
        Assert.True(MaxDepth(shallow, root) <= MaxDepth(paper, root));
        // No in-tree can beat one hop to the root plus a root-avoiding shortest path to the tree's only root child.
        Assert.True(shallow.AverageDepth(root) >= ShortestPathBound(torus, root) - 1e-9);
    }

    [Theory]
    [InlineData("3x3x3", 3.04, 4)]
    [InlineData("4x4x4", 4.03, 7)]
    [InlineData("8x8x8", 7.72, 14)]
    public void ShallowTreesReachTheMeasuredDepths(string size, double average, int max)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus, TreeFamily.Shallow);
        var root = torus.CoordinateOf(7 % torus.Count);
        Assert.Equal(average, trees.AverageDepth(root), 2);
        Assert.Equal(max, MaxDepth(trees, root));
        // On 3x3x3 and 4x4x4 the search reaches the shortest-path bound.
        if (torus.SizeX <= 4)
        {
            Assert.Equal(ShortestPathBound(torus, root), trees.AverageDepth(root), 9);
        }
    }

    [Fact]
    public void EachTreesOnlyRootChildIsTheRootsNeighbourThroughItsPort()
    {
        var torus = Torus.Parse("5x4x3");
        var root = new Coordinate(2, 1, 0);
        Span<Port> children = stackalloc Port[Ports.Count];
        foreach (var family in new[] { TreeFamily.Shallow, TreeFamily.Paper })
        {
            var trees = new TreeTopology(torus, family);
            for (int t = 0; t < TreeCount; t++)
            {
                Assert.Equal(1, trees.GetChildPorts(root, root, t, children));
                Assert.Equal(TreeTables.RootPort(t), children[0]);
            }
        }
    }

    [Fact]
    public void TheSearchIsDeterministic()
    {
        var torus = Torus.Parse("6x5x4");
        var a = ShallowTreeSearch.Build(torus);
        var b = ShallowTreeSearch.Build(torus);
        for (int t = 0; t < TreeCount; t++)
        {
            Assert.Equal(a[t], b[t]);
        }
    }

    [Fact]
    public void AnUnknownFamilyIsRefused()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new TreeTopology(Torus.Parse("3x3x3"), (TreeFamily)9));
    }

    private static int MaxDepth(TreeTopology trees, Coordinate root)
    {
        int max = 0;
        foreach (var c in trees.Torus.All())
        {
            for (int t = 0; t < TreeCount; t++)
            {
                max = Math.Max(max, trees.Depth(root, c, t));
            }
        }
        return max;
    }

    // Mean over non-root servers and trees of 1 + (hops to tree t's root child on paths that avoid the root).
    private static double ShortestPathBound(Torus torus, Coordinate root)
    {
        long sum = 0;
        for (int t = 0; t < TreeCount; t++)
        {
            var first = torus.Neighbour(root, TreeTables.RootPort(t));
            var distance = new Dictionary<Coordinate, int> { [first] = 0 };
            var queue = new Queue<Coordinate>([first]);
            while (queue.Count > 0)
            {
                var c = queue.Dequeue();
                foreach (var port in Ports.All)
                {
                    var n = torus.Neighbour(c, port);
                    if (n != root && distance.TryAdd(n, distance[c] + 1))
                    {
                        queue.Enqueue(n);
                    }
                }
            }
            foreach (var c in torus.All())
            {
                if (c != root)
                {
                    sum += 1 + distance[c];
                }
            }
        }
        return (double)sum / ((torus.Count - 1) * TreeCount);
    }

    private const int TreeCount = TreeTopology.TreeCount;

    private static IEnumerable<Coordinate> SampleRoots(Torus torus)
    {
        yield return torus.CoordinateOf(0);
        yield return torus.CoordinateOf(torus.Count - 1);
        yield return torus.CoordinateOf(torus.Count / 2);
    }
}
