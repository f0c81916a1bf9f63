namespace Camdoop.MapReduce.Trees;

/// <summary>Which set of six link-disjoint in-trees a job's shuffle runs over (both are six spanning in-trees, disjoint on directed links).</summary>
public enum TreeFamily : byte
{
    /// <summary>The paper's trees improved by a local search: 7.72 hops on average on 8x8x8 instead of 10.77.</summary>
    Shallow = 0,

    /// <summary>The paper's trees (§4.1, Fig. 4): a next hop chosen by which offsets from the root are zero.</summary>
    Paper = 1,
}
