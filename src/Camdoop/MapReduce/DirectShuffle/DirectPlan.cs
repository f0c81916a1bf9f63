namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// The plain direct shuffle (TCP Camdoop): one tree per reduce task, every server's stream straight to the root, which
/// waits for all the other servers.
/// </summary>
public sealed class DirectPlan : IAggregationPlan
{
    private readonly int _servers;
    private readonly IReadOnlyList<int> _roots;

    /// <param name="servers">The job's servers.</param>
    /// <param name="roots">Each reduce task's root server index.</param>
    public DirectPlan(int servers, IReadOnlyList<int> roots)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(servers);
        ArgumentNullException.ThrowIfNull(roots);
        _servers = servers;
        _roots = roots;
    }

    public int Trees => 1;

    public int ParentOf(int reduceTask, int tree, int node) => -1;

    public int ChildrenOf(int reduceTask, int tree, int node) => node == _roots[reduceTask] ? _servers - 1 : 0;
}
