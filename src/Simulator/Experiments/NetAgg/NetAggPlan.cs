using Camdoop.MapReduce.DirectShuffle;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments.NetAgg;

/// <summary>
/// NetAgg's aggregation trees (the NetAgg paper, §3.1): a worker sends its sorted output for a reduce task to the
/// first agg box on its network path to the reducer; each box merges (and combines when the job allows) and sends on
/// to the next box on the path; the box nearest the reducer sends to the reducer, the root. On racks the path from a
/// worker in another rack is its rack's switch, the core, the reducer's rack's switch; from the reducer's own rack it
/// is that rack's switch only; switches without a box are skipped. Every tree of a reduce task takes the same boxes
/// (one per switch) and carries a key-disjoint part of the data, so several trees spread the streams between two boxes
/// over the network's parallel paths. A failed box is skipped too: its children send to the next one on the path.
/// </summary>
public sealed class NetAggPlan : IApplianceTolerantPlan
{
    private readonly NetAggLayout _layout;
    private readonly int[] _roots;
    private readonly HashSet<int> _failed;
    private readonly int[][] _parent;
    private readonly int[][] _children;

    public NetAggPlan(NetAggLayout layout, IReadOnlyList<int> roots, int trees, IEnumerable<int>? failedBoxes = null)
    {
        ArgumentNullException.ThrowIfNull(layout);
        ArgumentNullException.ThrowIfNull(roots);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(trees);
        _layout = layout;
        _roots = [.. roots];
        Trees = trees;
        _failed = [.. failedBoxes ?? []];
        Nodes = layout.Servers + layout.Boxes;
        _parent = new int[_roots.Length][];
        _children = new int[_roots.Length][];
        for (int r = 0; r < _roots.Length; r++)
        {
            (_parent[r], _children[r]) = Build(_roots[r]);
        }
    }

    public int Trees { get; }

    /// <summary>Servers and boxes: node indices 0 to Nodes - 1.</summary>
    public int Nodes { get; }

    public NetAggLayout Layout => _layout;

    /// <summary>The boxes no tree uses any more.</summary>
    public IReadOnlyCollection<int> FailedBoxes => _failed;

    /// <summary>
    /// The node <paramref name="node"/> sends its stream of the tree to: the next box on the path with a box, or -1
    /// for the reducer. A box with nothing to merge for the task, and the reducer itself, send nothing (-1).
    /// </summary>
    public int ParentOf(int reduceTask, int tree, int node)
    {
        CheckTree(tree);
        return _parent[reduceTask][node];
    }

    /// <summary>How many streams <paramref name="node"/> waits for in the tree (the reducer: those sent straight to it).</summary>
    public int ChildrenOf(int reduceTask, int tree, int node)
    {
        CheckTree(tree);
        return _children[reduceTask][node];
    }

    /// <summary>Whether <paramref name="node"/> sends a stream for the reduce task: a server other than its root, or a box with children.</summary>
    public bool Sends(int reduceTask, int node) =>
        node < _layout.Servers ? node != _roots[reduceTask] : _children[reduceTask][node] > 0;

    /// <summary>The same trees with <paramref name="box"/> failed as well: its children send to the next box on the path.</summary>
    public NetAggPlan Without(int box) => new(_layout, _roots, Trees, [.. _failed, box]);

    IApplianceTolerantPlan IApplianceTolerantPlan.WithoutAppliance(int node) => Without(node);

    /// <summary>The boxes on the path from <paramref name="server"/> to the reducer <paramref name="root"/>, in order, failed ones skipped.</summary>
    public IEnumerable<int> PathBoxes(int server, int root)
    {
        int from = _layout.RackOf(server), to = _layout.RackOf(root);
        var path = from == to ? [_layout.RackBox(to)] : new[] { _layout.RackBox(from), _layout.CoreBox, _layout.RackBox(to) };
        return path.Where(b => b >= 0 && !_failed.Contains(b));
    }

    private (int[] Parent, int[] Children) Build(int root)
    {
        var parent = new int[Nodes];
        var children = new int[Nodes];
        Array.Fill(parent, -1);
        for (int s = 0; s < _layout.Servers; s++)
        {
            if (s == root)
            {
                continue;
            }
            // The worker's stream goes to the first box; each box on the path to the next one, the last to the root.
            int previous = s;
            foreach (int box in PathBoxes(s, root))
            {
                parent[previous] = box;
                previous = box;
            }
            parent[previous] = -1;
        }
        // Each sender counts once at its parent (the root is node `root`).
        for (int node = 0; node < Nodes; node++)
        {
            if (node == root || (node >= _layout.Servers && !IsUsed(node, parent)))
            {
                continue;
            }
            children[parent[node] >= 0 ? parent[node] : root]++;
        }
        return (parent, children);
    }

    // A box is used when some node sends to it.
    private static bool IsUsed(int box, int[] parent) => Array.IndexOf(parent, box) >= 0;

    private void CheckTree(int tree)
    {
        if ((uint)tree >= (uint)Trees)
        {
            throw new ArgumentOutOfRangeException(nameof(tree), tree, $"the plan has {Trees} trees");
        }
    }
}
