namespace Camdoop.MapReduce.DirectShuffle.Plans;

/// <summary>
/// Rack-level aggregation (the NetAgg paper's "rack"): in each rack (consecutive servers) one server merges the
/// streams of the others and sends one stream across the core to the reducer; the reducer's own rack sends straight
/// to it, so it is that rack's aggregator. The aggregator of the other racks rotates with the reduce task (and tree),
/// so with many reduce tasks every server takes its share. With one rack (a single switch) it is the direct shuffle.
/// </summary>
public sealed class RackPlan : ServerPlan
{
    private readonly int _rackSize;

    public RackPlan(int servers, int rackSize, IReadOnlyList<int> roots, int trees = 1)
        : base(servers, roots, trees)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(rackSize);
        _rackSize = Math.Min(rackSize, servers);
    }

    private int Racks => (Servers + _rackSize - 1) / _rackSize;

    public override int ParentOf(int reduceTask, int tree, int node)
    {
        int aggregator = Aggregator(reduceTask, tree, node / _rackSize);
        return node == aggregator || aggregator == Roots[reduceTask] ? -1 : aggregator;
    }

    public override int ChildrenOf(int reduceTask, int tree, int node)
    {
        int rack = node / _rackSize;
        if (node == Roots[reduceTask])
        {
            return RackCount(rack) - 1 + Racks - 1;
        }
        return node == Aggregator(reduceTask, tree, rack) ? RackCount(rack) - 1 : 0;
    }

    /// <summary>The server that merges <paramref name="rack"/>'s streams: the root in its own rack, else one rotating with the task.</summary>
    private int Aggregator(int reduceTask, int tree, int rack)
    {
        int root = Roots[reduceTask];
        if (root / _rackSize == rack)
        {
            return root;
        }
        return (rack * _rackSize) + (int)((((long)reduceTask * Trees) + tree) % RackCount(rack));
    }

    private int RackCount(int rack) => Math.Min(Servers, (rack + 1) * _rackSize) - (rack * _rackSize);
}
