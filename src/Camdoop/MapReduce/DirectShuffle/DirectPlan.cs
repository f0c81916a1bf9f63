namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// The plain direct shuffle (TCP Camdoop): every server's stream straight to the root, which waits for all the other
/// servers; one tree per reduce task unless asked for more (then one stream per server and tree).
/// </summary>
public sealed class DirectPlan : ServerPlan
{
    /// <param name="servers">The job's servers.</param>
    /// <param name="roots">Each reduce task's root server index.</param>
    /// <param name="trees">Streams per server and reduce task, each with some of the key stripes.</param>
    public DirectPlan(int servers, IReadOnlyList<int> roots, int trees = 1)
        : base(servers, roots, trees)
    {
    }

    public override int ParentOf(int reduceTask, int tree, int node) => -1;

    public override int ChildrenOf(int reduceTask, int tree, int node) => node == Roots[reduceTask] ? Servers - 1 : 0;
}
