namespace Camdoop.Simulator.Network;

/// <summary>Which switches of a NetAgg network have an agg box (the NetAgg paper's full and partial deployments).</summary>
public enum AggBoxPlacement
{
    /// <summary>One box on every switch: each rack's switch and the core.</summary>
    All,

    /// <summary>Only the upper tier (the core switch): the paper's partial deployment, no box at the racks.</summary>
    Upper,
}

/// <summary>
/// The agg boxes of a NetAgg network (<see cref="NetAggTopology"/>). Each is a host cabled to its switch at its own
/// link rate that merges and combines the streams through it at its own processing rate, whether or not the servers'
/// compute is priced. Defaults are the NetAgg paper's: a 10 Gbit/s link and 9.2 Gbit/s of aggregation.
/// </summary>
public sealed record AggBoxOptions
{
    public AggBoxPlacement Placement { get; init; } = AggBoxPlacement.All;

    /// <summary>Rate of the cable between a box and its switch, both directions.</summary>
    public long LinkRateBitsPerSecond { get; init; } = 10_000_000_000;

    /// <summary>Bits of input a box merges and combines per second (every kind of work it declares).</summary>
    public double ProcessingBitsPerSecond { get; init; } = 9.2e9;

    /// <summary>The box's core as compute rates: every kind of work at <see cref="ProcessingBitsPerSecond"/>.</summary>
    public ComputeRates Rates => new()
    {
        MapBitsPerSecond = ProcessingBitsPerSecond,
        MergeBitsPerSecond = ProcessingBitsPerSecond,
        ReduceBitsPerSecond = ProcessingBitsPerSecond,
    };

    internal void Validate()
    {
        if (!Enum.IsDefined(Placement))
        {
            throw new ArgumentOutOfRangeException(nameof(Placement), Placement, "agg boxes go on all switches or the upper tier");
        }
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(LinkRateBitsPerSecond);
        if (!double.IsFinite(ProcessingBitsPerSecond) || ProcessingBitsPerSecond <= 0)
        {
            throw new ArgumentOutOfRangeException(nameof(ProcessingBitsPerSecond), ProcessingBitsPerSecond, "a processing rate is a positive number of bits per second");
        }
    }
}
