namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>
/// Where each node's sorted stream for a reduce task goes in a stream shuffle: straight to the reducer (TCP Camdoop),
/// or up an aggregation tree whose interior vertices merge (and combine, when the job allows it) their children's
/// streams and forward one sorted stream to their parent.
/// <para>
/// Nodes are indexed 0 .. servers-1 for the job's servers (torus index order); indices from servers on are
/// appliances: hosts with no map output and no reduce task that only merge and forward. A node is addressed by the
/// hosts' torus (<c>Context.Torus.CoordinateOf(index)</c>), of which the servers are a prefix.
/// </para>
/// <para>
/// A server takes part in every tree: it sends one stream per tree (its own stripes, merged with its children's
/// streams if it has any) unless it is the reduce task's root. An appliance takes part in a tree only where it has
/// children. The records of stripe s (a hash of the key, <see cref="Records.Stripes"/>) travel on tree s mod
/// <see cref="Trees"/>, so the trees carry key-disjoint parts and the root merges them.
/// </para>
/// </summary>
public interface IAggregationPlan
{
    /// <summary>Aggregation trees per reduce task (1 ..).</summary>
    int Trees { get; }

    /// <summary>
    /// The node <paramref name="node"/> sends its stream of <paramref name="tree"/> to: a node index, or -1 for the
    /// reduce task's own server (the root). The root itself answers -1.
    /// </summary>
    int ParentOf(int reduceTask, int tree, int node);

    /// <summary>How many streams <paramref name="node"/> waits for in <paramref name="tree"/> (its children).</summary>
    int ChildrenOf(int reduceTask, int tree, int node);

    /// <summary>Nodes the plan covers, servers then appliances; null: every host.</summary>
    int? Nodes => null;

    /// <summary>Whether <paramref name="node"/> is gone from the plan (a lost server): it sends nothing.</summary>
    bool IsLost(int node) => false;
}
