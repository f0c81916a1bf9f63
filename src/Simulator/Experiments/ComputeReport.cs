using System.Text.Json.Serialization;
using Camdoop.MapReduce.MapPhase;
using Camdoop.Runtime.Node;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>
/// What priced work cost in a run: the mode and rates (Gbit/s), the server whose core was busiest during the
/// shuffle and reduce and the fraction of that time it was busy (near 1: the run was bound by that server's
/// compute), and the map phase's modelled time (the busiest server's map input over its map cores), reported apart
/// from the shuffle and reduce time.
/// </summary>
public sealed record ComputeReport(
    [property: JsonPropertyName("mode")] string Mode,
    [property: JsonPropertyName("mapGbps")] double MapGbps,
    [property: JsonPropertyName("mapCores")] int MapCores,
    [property: JsonPropertyName("mergeGbps")] double MergeGbps,
    [property: JsonPropertyName("reduceGbps")] double ReduceGbps,
    [property: JsonPropertyName("busiestServer")] string BusiestServer,
    [property: JsonPropertyName("busiestServerBusyFraction")] double BusiestServerBusyFraction,
    [property: JsonPropertyName("busiestServerMergeSeconds")] double BusiestServerMergeSeconds,
    [property: JsonPropertyName("busiestServerReduceSeconds")] double BusiestServerReduceSeconds,
    [property: JsonPropertyName("mapSeconds")] double MapSeconds)
{
    /// <summary>The per-frame cost priced (<see cref="ComputeRates.FrameNanoseconds"/>), in microseconds; 0 when off.</summary>
    [JsonPropertyName("frameMicroseconds")]
    public double FrameMicroseconds { get; init; }

    /// <summary>Of the busiest server's busy time, what receiving frames took.</summary>
    [JsonPropertyName("busiestServerFrameSeconds")]
    public double BusiestServerFrameSeconds { get; init; }

    internal static ComputeReport Of(ComputeModel model, Simulation sim, IReadOnlyList<IReadOnlyList<MapOutput>> maps, long t0, long end)
    {
        var rates = model.Rates;
        int n = sim.Servers.Count; // the servers' cores (agg boxes have their own rate and their own report)
        int busiest = 0;
        for (int s = 1; s < n; s++)
        {
            if (sim.ComputeBusy(s) > sim.ComputeBusy(busiest))
            {
                busiest = s;
            }
        }
        long mapBusiest = 0;
        for (int s = 0; s < n; s++)
        {
            long bytes = maps.Sum(job => job[s].Stats.InputBytes);
            mapBusiest = Math.Max(mapBusiest, rates.CostNs(ComputeWork.Map, bytes));
        }
        long span = end - t0;
        return new ComputeReport(
            ComputeModel.Name(model.Mode),
            rates.MapBitsPerSecond / 1e9,
            rates.MapCores,
            rates.MergeBitsPerSecond / 1e9,
            rates.ReduceBitsPerSecond / 1e9,
            sim.Torus.CoordinateOf(busiest).ToString(),
            span <= 0 ? 0 : (double)sim.ComputeBusy(busiest) / span,
            sim.ComputeBusy(busiest, ComputeWork.Merge) / 1e9,
            sim.ComputeBusy(busiest, ComputeWork.Reduce) / 1e9,
            mapBusiest / 1e9)
        {
            FrameMicroseconds = rates.FrameNanoseconds / 1e3,
            BusiestServerFrameSeconds = sim.ComputeFrameBusy(busiest) / 1e9,
        };
    }
}
