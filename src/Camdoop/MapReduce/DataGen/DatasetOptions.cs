namespace Camdoop.MapReduce.DataGen;

/// <summary>What to generate: kind, number of servers, bytes per server, seed, and S for the synthetic kind.</summary>
public sealed record DatasetOptions
{
    public required DatasetKind Kind { get; init; }

    public required int Servers { get; init; }

    /// <summary>Input bytes per server (default 2 MB, the paper's simulator setting).</summary>
    public long BytesPerServer { get; init; } = 2_000_000;

    public ulong Seed { get; init; } = 1;

    /// <summary>Output ratio S for <see cref="DatasetKind.Synthetic"/> (0 means 1/N).</summary>
    public double OutputRatio { get; init; } = 1;
}
