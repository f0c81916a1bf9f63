namespace Camdoop.MapReduce.DataGen;

/// <summary>What <see cref="DatasetGenerator.WriteFiles"/> produced.</summary>
public sealed record DatasetSummary
{
    public required DatasetOptions Options { get; init; }

    /// <summary>The built-in job this data set is for.</summary>
    public required string JobName { get; init; }

    public required IReadOnlyList<string> Files { get; init; }

    public required IReadOnlyList<long> BytesPerServer { get; init; }

    public long TotalBytes => BytesPerServer.Sum();

    /// <summary>For the synthetic kind: S computed from the generated keys (null otherwise).</summary>
    public double? AchievedOutputRatio { get; init; }
}
