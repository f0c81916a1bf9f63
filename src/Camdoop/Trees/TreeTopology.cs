using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Trees;

/// <summary>
/// The six link-disjoint spanning in-trees of a reduce task, all rooted at the reducer's server (paper §4.1, Fig. 4).
/// A server's parent in tree t depends only on which of its offsets from the root are non-zero: tree 0 ("X+")
/// follows the table below, and the other five are its images under rotating the axes (X to Y to Z) and mirroring
/// the signs. Every non-root server therefore has one parent per tree, a one-hop neighbour, and sends on each of
/// its six outbound links in exactly one tree; the root's outbound links stay unused.
/// <code>
/// x!=root.x y!=root.y z!=root.z | next hop in tree X+
///     0          0          1   | +X
///     0          1          0   | +X
///     0          1          1   | +X
///     1          0          0   | -X
///     1          0          1   | +Z
///     1          1          0   | +Y
///     1          1          1   | +Y
/// </code>
/// </summary>
public sealed class TreeTopology
{
    public const int TreeCount = 6;

    // Next hop of tree X+ indexed by the (x, y, z) "differs from root" bits, as (axis, sign).
    private static readonly (int Axis, int Sign)[] BaseTable =
    [
        (-1, 0), // 000: the root itself
        (0, +1), // 001
        (0, +1), // 010
        (0, +1), // 011
        (0, -1), // 100
        (2, +1), // 101
        (1, +1), // 110
        (1, +1), // 111
    ];

    // For each tree: the port taken for each flag combination (flags indexed as x<<2 | y<<1 | z in absolute axes).
    private readonly Port[][] _nextHop = new Port[TreeCount][];

    public TreeTopology(Torus torus)
    {
        Torus = torus;
        for (int t = 0; t < TreeCount; t++)
        {
            int rotation = t % 3;
            int mirror = t < 3 ? 1 : -1;
            var table = new Port[8];
            for (int flags = 1; flags < 8; flags++)
            {
                // Tree t sees absolute axis a as base axis (a - rotation) mod 3.
                int baseFlags = 0;
                for (int a = 0; a < 3; a++)
                {
                    if ((flags & (4 >> a)) != 0)
                    {
                        int b = (a - rotation + 3) % 3;
                        baseFlags |= 4 >> b;
                    }
                }
                var (baseAxis, sign) = BaseTable[baseFlags];
                int axis = (baseAxis + rotation) % 3;
                table[flags] = Ports.FromAxis(axis, sign * mirror);
            }
            _nextHop[t] = table;
        }
    }

    public Torus Torus { get; }

    /// <summary>Short names of the trees, in index order.</summary>
    public static ReadOnlySpan<string> Names => new[] { "X+", "Y+", "Z+", "X-", "Y-", "Z-" };

    /// <summary>The port a vertex at <paramref name="vertex"/> uses to reach its parent in <paramref name="tree"/>, or null at the root.</summary>
    public Port? ParentPort(Coordinate root, Coordinate vertex, int tree)
    {
        int flags = (vertex.X != root.X ? 4 : 0) | (vertex.Y != root.Y ? 2 : 0) | (vertex.Z != root.Z ? 1 : 0);
        return flags == 0 ? null : _nextHop[tree][flags];
    }

    /// <summary>The parent vertex (a one-hop neighbour) of <paramref name="vertex"/> in <paramref name="tree"/>, or null at the root.</summary>
    public Coordinate? GetParent(Coordinate root, Coordinate vertex, int tree)
    {
        var port = ParentPort(root, vertex, tree);
        return port is null ? null : Torus.Neighbour(vertex, port.Value);
    }

    /// <summary>
    /// Ports on which <paramref name="vertex"/> receives from its children in <paramref name="tree"/>: a neighbour is a
    /// child when its parent port points back at us. Written into <paramref name="children"/>; returns the count.
    /// </summary>
    public int GetChildPorts(Coordinate root, Coordinate vertex, int tree, Span<Port> children)
    {
        int n = 0;
        foreach (var port in Ports.All)
        {
            var neighbour = Torus.Neighbour(vertex, port);
            var parentPort = ParentPort(root, neighbour, tree);
            // In a dimension of size 2 both ports of an axis reach the same neighbour; only the link that the
            // child actually sends on (its parent port, arriving on our opposite port) counts.
            if (parentPort is { } pp && pp.Opposite() == port && Torus.Neighbour(neighbour, pp) == vertex)
            {
                children[n++] = port;
            }
        }
        return n;
    }

    /// <summary>Hops from <paramref name="vertex"/> to the root along <paramref name="tree"/>.</summary>
    public int Depth(Coordinate root, Coordinate vertex, int tree)
    {
        int depth = 0;
        var c = vertex;
        while (c != root)
        {
            c = GetParent(root, c, tree)!.Value;
            if (++depth > Torus.Count)
            {
                throw new InvalidOperationException($"tree {tree} has a cycle through {vertex}");
            }
        }
        return depth;
    }

    /// <summary>Mean depth over all non-root servers and all six trees.</summary>
    public double AverageDepth(Coordinate root)
    {
        long sum = 0;
        for (int i = 0; i < Torus.Count; i++)
        {
            var c = Torus.CoordinateOf(i);
            if (c == root)
            {
                continue;
            }
            for (int t = 0; t < TreeCount; t++)
            {
                sum += Depth(root, c, t);
            }
        }
        return (double)sum / ((Torus.Count - 1) * TreeCount);
    }
}
