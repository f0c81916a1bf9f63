namespace Camdoop.MapReduce.Jobs.Control;

/// <summary>How a job's shuffle treats records on the way to the reducers (the Camdoop paper, §5 baselines).</summary>
public enum ShuffleMode : byte
{
    /// <summary>On-path aggregation: every vertex combines equal keys (for associative, commutative jobs).</summary>
    Camdoop = 0,

    /// <summary>"Camdoop (no agg.)": the same trees and transport, vertices only merge; combine/reduce only at the root.</summary>
    NoAgg = 1,
}
