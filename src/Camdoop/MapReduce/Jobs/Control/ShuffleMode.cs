namespace Camdoop.MapReduce.Jobs.Control;

/// <summary>How a job's shuffle treats records on the way to the reducers (the Camdoop paper, §5 baselines).</summary>
public enum ShuffleMode : byte
{
    /// <summary>On-path aggregation: every vertex combines equal keys (for associative, commutative jobs).</summary>
    Camdoop = 0,

    /// <summary>"Camdoop (no agg.)": the same trees and transport, vertices only merge; combine/reduce only at the root.</summary>
    NoAgg = 1,

    /// <summary>"TCP Camdoop": every map output straight to its reducer over TCP through a switch, merged only there.</summary>
    Tcp = 2,
}

public static class ShuffleModes
{
    /// <summary>The mode's name on the command line and in reports: camdoop, noagg or tcp.</summary>
    public static string Name(this ShuffleMode mode) => mode switch
    {
        ShuffleMode.Camdoop => "camdoop",
        ShuffleMode.NoAgg => "noagg",
        ShuffleMode.Tcp => "tcp",
        _ => throw new ArgumentOutOfRangeException(nameof(mode)),
    };
}
