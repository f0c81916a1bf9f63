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
    [MemberData(nameof(Sizes))]
    public void EveryServerIsAtLeastItsTorusDistanceFromTheRoot(string size, TreeFamily family)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus, family);
        foreach (var root in SampleRoots(torus))
        {
            int deepest = 0;
            foreach (var c in torus.All())
            {
                for (int t = 0; t < TreeCount; t++)
                {
                    int depth = trees.Depth(root, c, t);
                    Assert.True(depth >= torus.Distance(c, root), $"{size} {family}: {c} at depth {depth} in tree {t}");
                    deepest = Math.Max(deepest, depth);
                }
            }
            // So some server is at least the diameter deep.
            Assert.True(deepest >= torus.Diameter, $"{size} {family}: deepest {deepest} < diameter {torus.Diameter}");
        }
    }

    [Theory]
    [InlineData("3x3x3")]
    [InlineData("4x4x4")]
    [InlineData("8x8x8")]
    [InlineData("3x4x5")]
    [InlineData("2x3x4")]
    [InlineData("2x2x2")]
    [InlineData("6x4x2")]
    public void ThePaperTreesFollowThePapersNextHopRule(string size)
    {
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus, TreeFamily.Paper);
        foreach (var root in SampleRoots(torus))
        {
            foreach (var c in torus.All())
            {
                for (int t = 0; t < TreeCount; t++)
                {
                    var path = WalkPaperTree(torus, root, c, t);
                    Assert.Equal(path.Count == 0 ? null : (Coordinate?)path[0], trees.GetParent(root, c, t));
                    Assert.Equal(path.Count, trees.Depth(root, c, t));
                }
            }
        }
    }

    [Theory]
    [InlineData("3x3x3")]
    [InlineData("8x8x8")]
    [InlineData("3x4x5")]
    [InlineData("2x2x2")]
    [InlineData("6x4x2")]
    public void ThePaperTreesDeepestServerIsTheLongestWalkOfTheRule(string size)
    {
        // In tree X+ the rule's longest walks start at (SX-1, 1, 1): +Y over SY-1 hops, +Z over SZ-1, then -X over
        // SX-1 to the root; or at (0, 1, 1): +X, +Y over SY-1, +Z over SZ-1, -X (longer when SX is 2). The other trees
        // are its rotations and mirror images, so their axis X is each of the torus's axes in turn.
        var torus = Torus.Parse(size);
        var root = torus.CoordinateOf(torus.Count / 2);
        int sides = torus.SizeX + torus.SizeY + torus.SizeZ;
        int expected = sides - Math.Min(3, Math.Min(torus.SizeX, Math.Min(torus.SizeY, torus.SizeZ)));
        int walked = 0;
        foreach (var c in torus.All())
        {
            for (int t = 0; t < TreeCount; t++)
            {
                walked = Math.Max(walked, WalkPaperTree(torus, root, c, t).Count);
            }
        }
        Assert.Equal(expected, walked);
        Assert.Equal(expected, MaxDepth(new TreeTopology(torus, TreeFamily.Paper), root));
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
        // No in-tree can beat one hop to the root plus a root-avoiding shortest path to the tree's only root child,
        // server by server.
        var bound = ShortestPathBounds(torus, root);
        foreach (var c in torus.All().Where(c => c != root))
        {
            for (int t = 0; t < TreeCount; t++)
            {
                Assert.True(shallow.Depth(root, c, t) >= bound[t][c], $"{size}: {c} in tree {t} at {shallow.Depth(root, c, t)} < {bound[t][c]}");
            }
        }
        Assert.True(shallow.AverageDepth(root) >= Average(bound) - 1e-9);
    }

    [Theory]
    [InlineData("3x3x3")]
    [InlineData("4x4x4")]
    public void ShallowTreesReachTheShortestPathBoundOnSmallCubes(string size)
    {
        // ShallowTreeSearch claims that on 3x3x3 and 4x4x4 the search reaches the bound exactly: in every tree, every
        // server is a root-avoiding shortest path from the tree's only root child, plus the hop to the root.
        var torus = Torus.Parse(size);
        var trees = new TreeTopology(torus, TreeFamily.Shallow);
        foreach (var root in SampleRoots(torus))
        {
            var bound = ShortestPathBounds(torus, root);
            foreach (var c in torus.All().Where(c => c != root))
            {
                for (int t = 0; t < TreeCount; t++)
                {
                    Assert.Equal(bound[t][c], trees.Depth(root, c, t));
                }
            }
            Assert.Equal(Average(bound), trees.AverageDepth(root), 9);
            Assert.Equal(bound.Max(b => b.Values.Max()), MaxDepth(trees, root));
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
                Assert.Equal(RootPorts[t], children[0]);
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

    // Tree t's only child of the root is the root's neighbour through port t: X+, Y+, Z+, X-, Y-, Z- (docs/architecture.md).
    private static readonly Port[] RootPorts = [Port.XPlus, Port.YPlus, Port.ZPlus, Port.XMinus, Port.YMinus, Port.ZMinus];

    // The paper's next-hop rule for tree X+ (the Camdoop paper, §4.1, Fig. 4; the table in PaperTrees' comment): the
    // next hop depends only on which of the server's offsets from the root are non-zero.
    private static readonly Dictionary<(bool X, bool Y, bool Z), (int Axis, int Sign)> PaperRuleXPlus = new()
    {
        [(false, false, true)] = (0, +1),
        [(false, true, false)] = (0, +1),
        [(false, true, true)] = (0, +1),
        [(true, false, false)] = (0, -1),
        [(true, false, true)] = (2, +1),
        [(true, true, false)] = (1, +1),
        [(true, true, true)] = (1, +1),
    };

    // The servers a packet visits from `start` to the root in the paper's tree t, the root last; empty at the root.
    // Trees Y+ and Z+ are X+ with the axes rotated X to Y to Z once or twice, and X-, Y-, Z- are X+, Y+, Z+ with every
    // sign flipped: in tree t, the rule's axis a is the torus's axis (a + t mod 3) mod 3.
    private static List<Coordinate> WalkPaperTree(Torus torus, Coordinate root, Coordinate start, int tree)
    {
        int rotation = tree % 3;
        int mirror = tree < 3 ? 1 : -1;
        var path = new List<Coordinate>();
        var c = start;
        while (c != root)
        {
            bool Differs(int ruleAxis) => c[(ruleAxis + rotation) % 3] != root[(ruleAxis + rotation) % 3];
            var (axis, sign) = PaperRuleXPlus[(Differs(0), Differs(1), Differs(2))];
            c = Step(torus, c, (axis + rotation) % 3, sign * mirror);
            path.Add(c);
            Assert.True(path.Count <= torus.Count, $"the rule loops from {start} in tree {tree}");
        }
        return path;
    }

    private static Coordinate Step(Torus torus, Coordinate c, int axis, int sign)
    {
        int size = torus.Size(axis);
        return c.With(axis, (c[axis] + sign + size) % size);
    }

    // [tree][server] = 1 + hops from the server to tree t's only root child on paths that avoid the root: no in-tree
    // can do better, as every path up tree t enters the root through that child.
    private static Dictionary<Coordinate, int>[] ShortestPathBounds(Torus torus, Coordinate root)
    {
        var bounds = new Dictionary<Coordinate, int>[TreeCount];
        for (int t = 0; t < TreeCount; t++)
        {
            var first = Step(torus, root, t % 3, t < 3 ? 1 : -1);
            var distance = new Dictionary<Coordinate, int> { [first] = 0 };
            var queue = new Queue<Coordinate>([first]);
            while (queue.Count > 0)
            {
                var c = queue.Dequeue();
                for (int axis = 0; axis < 3; axis++)
                {
                    foreach (int sign in new[] { 1, -1 })
                    {
                        var n = Step(torus, c, axis, sign);
                        if (n != root && distance.TryAdd(n, distance[c] + 1))
                        {
                            queue.Enqueue(n);
                        }
                    }
                }
            }
            bounds[t] = distance.ToDictionary(kv => kv.Key, kv => kv.Value + 1);
        }
        return bounds;
    }

    // Mean over non-root servers and trees.
    private static double Average(Dictionary<Coordinate, int>[] bounds) =>
        bounds.Average(b => b.Values.Average());

    private const int TreeCount = TreeTopology.TreeCount;

    private static IEnumerable<Coordinate> SampleRoots(Torus torus)
    {
        yield return torus.CoordinateOf(0);
        yield return torus.CoordinateOf(torus.Count - 1);
        yield return torus.CoordinateOf(torus.Count / 2);
    }
}
