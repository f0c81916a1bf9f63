using System.Text.Json.Serialization;

namespace Camdoop.Experiments.NetAgg;

/// <summary>
/// What one agg box did in a NetAgg run: the bytes its vertices merged (its children's streams) and sent on, so the
/// report says how much each aggregation reduced, and how long its core was busy at the box's processing rate.
/// </summary>
public sealed record AggBoxReport(
    [property: JsonPropertyName("name")] string Name,
    [property: JsonPropertyName("host")] string Host,
    [property: JsonPropertyName("mergedBytes")] long MergedBytes,
    [property: JsonPropertyName("forwardedBytes")] long ForwardedBytes,
    [property: JsonPropertyName("busySeconds")] double BusySeconds,
    [property: JsonPropertyName("failed")] bool Failed)
{
    /// <summary>Forwarded over merged: 1 when the box only merged, less where it combined.</summary>
    [JsonPropertyName("reduction")]
    public double Reduction => MergedBytes == 0 ? 1 : (double)ForwardedBytes / MergedBytes;
}
