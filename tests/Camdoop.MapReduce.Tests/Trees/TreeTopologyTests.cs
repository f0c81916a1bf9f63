using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.Trees;

public class TreeTopologyTests
{
    public static TheoryData<string> Sizes => new() { "3x3x3", "4x4x4", "8x8x8", "3x4x5", "2x3x4" };

    [Theory]
    [MemberData(nameof(Sizes))]
    public void EveryNonRootServerHasOneOneHopParentPerTreeAndReachesTheRoot(string size)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus);
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
    public void TheSixTreesAreDisjointOnDirectedLinks(string size)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus);
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
    public void ChildPortsAreTheExactInverseOfParents(string size)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus);
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
    public void AverageDepthMatchesTheDesign(string size, double expected)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus);
        Assert.Equal(expected, trees.AverageDepth(torus.CoordinateOf(0)), 2);
    }

    private const int TreeCount = TreeTopology.TreeCount;

    private static IEnumerable<Coordinate> SampleRoots(Torus torus)
    {
        yield return torus.CoordinateOf(0);
        yield return torus.CoordinateOf(torus.Count - 1);
        yield return torus.CoordinateOf(torus.Count / 2);
    }
}
