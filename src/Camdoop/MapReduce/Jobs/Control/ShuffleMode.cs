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

/// <summary>The names users give shuffle modes on the command line, in job requests and in reports.</summary>
public static class ShuffleModes
{
    /// <summary>Every mode by name, in the enum's order, for option parsers.</summary>
    public static readonly IReadOnlyDictionary<string, ShuffleMode> All =
        Enum.GetValues<ShuffleMode>().ToDictionary(m => m.Name(), StringComparer.Ordinal);

    /// <summary>The names as a sentence lists them: "camdoop, noagg or tcp".</summary>
    public static string NameList { get; } = $"{string.Join(", ", All.Keys.SkipLast(1))} or {All.Keys.Last()}";

    /// <summary>The mode's name on the command line and in reports: camdoop, noagg or tcp.</summary>
    public static string Name(this ShuffleMode mode) => mode switch
    {
        ShuffleMode.Camdoop => "camdoop",
        ShuffleMode.NoAgg => "noagg",
        ShuffleMode.Tcp => "tcp",
        _ => throw new ArgumentOutOfRangeException(nameof(mode)),
    };

    /// <summary>The mode named <paramref name="name"/> (case-insensitive); false for anything else.</summary>
    public static bool TryParse(string? name, out ShuffleMode mode) =>
        All.TryGetValue(name?.ToLowerInvariant() ?? "", out mode);
}
