namespace Camdoop.MapReduce.DirectShuffle.Plans;

/// <summary>
/// How a stream shuffle's servers aggregate among themselves (the edge-based aggregation of the NetAgg paper, "NetAgg:
/// Using Middleboxes for Application-specific On-path Aggregation in Data Centres"), or not at all.
/// </summary>
public enum Aggregation
{
    /// <summary>Every server's stream straight to the reducer, merged only there (TCP Camdoop).</summary>
    Direct,

    /// <summary>One server per rack merges its rack's streams and sends one stream across the core to the reducer.</summary>
    Rack,

    /// <summary>A binary tree over the servers rooted at the reducer, each subtree a contiguous run of servers (a rack first).</summary>
    Binary,

    /// <summary>A chain of every server ending at the reducer, in rack order: each merges its predecessor's stream with its own.</summary>
    Chain,
}

public static class AggregationNames
{
    public static string Name(this Aggregation aggregation) => aggregation.ToString().ToLowerInvariant();

    public static bool TryParse(string text, out Aggregation aggregation)
    {
        foreach (var a in Enum.GetValues<Aggregation>())
        {
            if (a.Name() == text)
            {
                aggregation = a;
                return true;
            }
        }
        aggregation = default;
        return false;
    }

    /// <summary>
    /// The plan of <paramref name="aggregation"/> for servers 0 .. <paramref name="servers"/>-1, racks of
    /// <paramref name="rackSize"/> consecutive servers, the given reduce task roots, with <paramref name="trees"/>
    /// trees per reduce task.
    /// </summary>
    public static IAggregationPlan Plan(this Aggregation aggregation, int servers, int rackSize, IReadOnlyList<int> roots, int trees = 1) => aggregation switch
    {
        Aggregation.Direct => new DirectPlan(servers, roots, trees),
        Aggregation.Rack => new RackPlan(servers, rackSize, roots, trees),
        Aggregation.Binary => new BinaryPlan(servers, roots, trees),
        Aggregation.Chain => new ChainPlan(servers, roots, trees),
        _ => throw new ArgumentOutOfRangeException(nameof(aggregation)),
    };
}
