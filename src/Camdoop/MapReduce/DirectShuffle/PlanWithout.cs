using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// A plan on the servers left after some were lost: a lost node sends nothing and waits for nothing, and each of its
/// children sends to the first live node above it (the root, past every lost one). An appliance left with no live
/// child sends nothing either. The roots must be live: a job that starts over on fewer servers places them there.
/// </summary>
public sealed class PlanWithout : IAggregationPlan
{
    private readonly IAggregationPlan _inner;
    private readonly int _nodes;
    private readonly int _servers;
    private readonly IReadOnlyList<int> _roots;
    private readonly HashSet<int> _lost;
    private readonly Dictionary<(int Task, int Tree), int[]> _children = [];

    /// <param name="inner">The plan over every node.</param>
    /// <param name="nodes">Nodes of the plan (servers, then appliances).</param>
    /// <param name="servers">How many of the nodes are servers.</param>
    /// <param name="roots">Each reduce task's root server (live).</param>
    /// <param name="lost">The nodes gone.</param>
    public PlanWithout(IAggregationPlan inner, int nodes, int servers, IReadOnlyList<int> roots, IEnumerable<int> lost)
    {
        ArgumentNullException.ThrowIfNull(inner);
        ArgumentNullException.ThrowIfNull(roots);
        ArgumentNullException.ThrowIfNull(lost);
        _inner = inner;
        _nodes = nodes;
        _servers = servers;
        _roots = roots;
        _lost = [.. lost];
        if (roots.Any(_lost.Contains))
        {
            throw new ArgumentException("a lost server roots a reduce task: place the roots on live servers first", nameof(roots));
        }
    }

    /// <summary>The direct plan of <paramref name="description"/> (every stream to its root) over the servers in <paramref name="members"/>.</summary>
    public static IAggregationPlan DirectOver(JobDescription description, Torus servers, KeyRouting.ServerSet members)
    {
        ArgumentNullException.ThrowIfNull(description);
        ArgumentNullException.ThrowIfNull(servers);
        ArgumentNullException.ThrowIfNull(members);
        var roots = JobPlacement.For(servers, description).RootIndices;
        var plan = new DirectPlan(servers.Count, roots);
        return members.Count == servers.Count ? plan : Over(plan, servers.Count, servers.Count, roots, members);
    }

    /// <summary><paramref name="plan"/> without the servers outside <paramref name="members"/>; the plan itself when none is missing.</summary>
    public static IAggregationPlan Over(IAggregationPlan plan, int nodes, int servers, IReadOnlyList<int> roots, KeyRouting.ServerSet members)
    {
        ArgumentNullException.ThrowIfNull(members);
        var lost = Enumerable.Range(0, servers).Where(s => !members.Contains(s)).ToList();
        return lost.Count == 0 ? plan : new PlanWithout(plan, nodes, servers, roots, lost);
    }

    public int Trees => _inner.Trees;

    public int? Nodes => _nodes;

    public bool IsLost(int node) => _lost.Contains(node) || _inner.IsLost(node);

    public int ParentOf(int reduceTask, int tree, int node)
    {
        int parent = _inner.ParentOf(reduceTask, tree, node);
        while (parent >= 0 && _lost.Contains(parent))
        {
            parent = _inner.ParentOf(reduceTask, tree, parent);
        }
        return parent;
    }

    public int ChildrenOf(int reduceTask, int tree, int node)
    {
        if (!_children.TryGetValue((reduceTask, tree), out var children))
        {
            children = Count(reduceTask, tree);
            _children[(reduceTask, tree)] = children;
        }
        return children[node];
    }

    private int[] Count(int reduceTask, int tree)
    {
        int root = _roots[reduceTask];
        var sends = new bool?[_nodes];
        var children = new int[_nodes];
        // Servers always send (but the root); an appliance only when a live node sends to it: appliances last, deepest first.
        var parentOf = new int[_nodes];
        for (int n = 0; n < _nodes; n++)
        {
            parentOf[n] = _lost.Contains(n) ? -2 : ParentOf(reduceTask, tree, n);
        }
        bool Sends(int n)
        {
            if (sends[n] is { } known)
            {
                return known;
            }
            bool result;
            if (_lost.Contains(n) || n == root)
            {
                result = false;
            }
            else if (n < _servers)
            {
                result = true;
            }
            else
            {
                sends[n] = false; // no cycles in a tree; guards a malformed plan
                result = Enumerable.Range(0, _nodes).Any(m => parentOf[m] == n && Sends(m));
            }
            sends[n] = result;
            return result;
        }
        for (int n = 0; n < _nodes; n++)
        {
            if (Sends(n))
            {
                int parent = parentOf[n];
                children[parent >= 0 ? parent : root]++;
            }
        }
        return children;
    }
}
