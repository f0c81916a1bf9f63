namespace Camdoop.MapReduce.DirectShuffle.Plans;

/// <summary>
/// Binary-tree aggregation (a 2-ary tree of servers, the NetAgg paper's "binary"): rooted at the reducer; every vertex
/// splits the servers after it in tree order into two contiguous halves, each a subtree. Contiguous runs of the
/// index order are racks, so the leaves aggregate within their rack first and then progressively across racks.
/// </summary>
public sealed class BinaryPlan : ServerPlan
{

    public BinaryPlan(int servers, IReadOnlyList<int> roots, int trees = 1)
        : base(servers, roots, trees)
    {
    }

    public override int ParentOf(int reduceTask, int tree, int node)
    {
        var order = Order(reduceTask, tree);
        var (parent, _) = Find(order.PositionOf(node));
        return parent <= 0 ? -1 : order.ServerAt(parent);
    }

    public override int ChildrenOf(int reduceTask, int tree, int node)
    {
        var (_, size) = Find(Order(reduceTask, tree).PositionOf(node));
        int below = size - 1;
        int left = (below + 1) / 2;
        return (left > 0 ? 1 : 0) + (below - left > 0 ? 1 : 0);
    }

    /// <summary>The parent's position (-1 for the root) and the size of the subtree at <paramref name="position"/>.</summary>
    private (int Parent, int Size) Find(int position)
    {
        int lo = 0, hi = Servers, parent = -1;
        while (lo != position)
        {
            // The servers after lo: [lo+1, mid) is the left subtree, [mid, hi) the right one.
            int mid = lo + 1 + ((hi - lo) / 2);
            parent = lo;
            if (position < mid)
            {
                (lo, hi) = (lo + 1, mid);
            }
            else
            {
                lo = mid;
            }
        }
        return (parent, hi - lo);
    }

    private ServerOrder Order(int reduceTask, int tree) => new(Servers, Roots[reduceTask], tree, Trees);
}
