namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// What every plan over the job's servers starts from: how many servers there are, each reduce task's root server
/// and how many trees each reduce task has.
/// </summary>
public abstract class ServerPlan : IAggregationPlan
{
    /// <param name="servers">The job's servers.</param>
    /// <param name="roots">Each reduce task's root server index.</param>
    /// <param name="trees">Trees per reduce task, each with some of the key stripes.</param>
    protected ServerPlan(int servers, IReadOnlyList<int> roots, int trees)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(servers);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(trees);
        ArgumentNullException.ThrowIfNull(roots);
        Servers = servers;
        Roots = roots;
        Trees = trees;
    }

    public int Trees { get; }

    protected int Servers { get; }

    protected IReadOnlyList<int> Roots { get; }

    public abstract int ParentOf(int reduceTask, int tree, int node);

    public abstract int ChildrenOf(int reduceTask, int tree, int node);
}
