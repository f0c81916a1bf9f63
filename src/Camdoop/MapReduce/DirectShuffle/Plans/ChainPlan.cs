namespace Camdoop.MapReduce.DirectShuffle.Plans;

/// <summary>
/// Chain aggregation (a 1-ary tree of servers, the NetAgg paper's "chain"): the servers in rack order, each merging
/// its predecessor's stream with its own map output and sending one stream on, the last one being the reducer. It
/// crosses each rack boundary once, but every server's downlink carries a stream as well as its uplink.
/// </summary>
public sealed class ChainPlan : ServerPlan
{

    public ChainPlan(int servers, IReadOnlyList<int> roots, int trees = 1)
        : base(servers, roots, trees)
    {
    }

    public override int ParentOf(int reduceTask, int tree, int node)
    {
        var order = Order(reduceTask, tree);
        int position = order.PositionOf(node);
        return position <= 1 ? -1 : order.ServerAt(position - 1);
    }

    public override int ChildrenOf(int reduceTask, int tree, int node) =>
        Order(reduceTask, tree).PositionOf(node) < Servers - 1 ? 1 : 0;

    private ServerOrder Order(int reduceTask, int tree) => new(Servers, Roots[reduceTask], tree, Trees);
}
