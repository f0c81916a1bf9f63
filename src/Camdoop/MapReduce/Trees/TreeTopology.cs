using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Trees;

/// <summary>
/// The six link-disjoint spanning in-trees of a reduce task, all rooted at the reducer's server (the Camdoop paper, §4.1, Fig. 4).
/// Every non-root server has one parent per tree, a one-hop neighbour, and sends on each of its six outbound links in
/// exactly one tree; the root's outbound links stay unused. Which trees: <see cref="TreeFamily"/> (the paper's, or
/// the shallower ones <see cref="ShallowTreeSearch"/> derives from them). Trees are the same up to translation for
/// every root, so a lookup is one table read at the vertex's offset from the root.
/// </summary>
public sealed class TreeTopology
{
    public const int TreeCount = 6;

    // [tree][index of (vertex - root) mod size] = parent port, for a root at the origin.
    private readonly byte[][] _parentPort;

    public TreeTopology(Torus torus, TreeFamily family = TreeFamily.Shallow)
    {
        ArgumentNullException.ThrowIfNull(torus);
        Torus = torus;
        _parentPort = TreeTables.Get(torus, family);
    }

    public Torus Torus { get; }

    /// <summary>Short names of the trees, in index order.</summary>
    public static ReadOnlySpan<string> Names => new[] { "X+", "Y+", "Z+", "X-", "Y-", "Z-" };

    /// <summary>The port a vertex at <paramref name="vertex"/> uses to reach its parent in <paramref name="tree"/>, or null at the root.</summary>
    public Port? ParentPort(Coordinate root, Coordinate vertex, int tree)
    {
        int offset = Torus.IndexOf(new Coordinate(
            Offset(vertex.X, root.X, Torus.SizeX), Offset(vertex.Y, root.Y, Torus.SizeY), Offset(vertex.Z, root.Z, Torus.SizeZ)));
        byte port = _parentPort[tree][offset];
        return port == TreeTables.NoParent ? null : (Port)port;
    }

    private static int Offset(int value, int root, int size)
    {
        int d = value - root;
        return d < 0 ? d + size : d;
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
