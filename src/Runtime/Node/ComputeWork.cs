namespace Camdoop.Runtime.Node;

/// <summary>
/// Kinds of CPU work a service declares through <see cref="INodeContext.Compute"/>, so that a simulator can price
/// them in virtual time at the rate of each kind.
/// </summary>
public enum ComputeWork : byte
{
    /// <summary>Running the job's map function over input and sorting what it emits.</summary>
    Map = 0,

    /// <summary>Merging (and combining) the sorted streams that enter a tree vertex.</summary>
    Merge = 1,

    /// <summary>The root's merge of its streams, the job's reduce function and writing the output.</summary>
    Reduce = 2,
}
