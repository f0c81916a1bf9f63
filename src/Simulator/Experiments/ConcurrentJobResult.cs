using System.Text.Json.Serialization;

namespace Camdoop.Experiments;

/// <summary>
/// One of several jobs that ran at once: where it ran, what it produced, its shuffle-and-reduce time among the others
/// and alone on the same servers with the same roots, and the ratio of the two (the Camdoop paper's Figure 8).
/// </summary>
public sealed record ConcurrentJobResult
{
    /// <summary>The job's place among those started (0 first).</summary>
    [JsonPropertyName("index")]
    public required int Index { get; init; }

    [JsonPropertyName("jobId")]
    public required string JobId { get; init; }

    [JsonPropertyName("job")]
    public required string Job { get; init; }

    [JsonPropertyName("seed")]
    public required ulong Seed { get; init; }

    [JsonPropertyName("mode")]
    public required string Mode { get; init; }

    [JsonPropertyName("reduceTasks")]
    public required int ReduceTasks { get; init; }

    /// <summary>The servers that mapped the job (coordinates), every server's when it was not confined.</summary>
    [JsonPropertyName("mapServers")]
    public required IReadOnlyList<string> MapServers { get; init; }

    /// <summary>Each reduce task's root, in task order.</summary>
    [JsonPropertyName("roots")]
    public required IReadOnlyList<string> Roots { get; init; }

    [JsonPropertyName("completed")]
    public required bool Completed { get; init; }

    [JsonPropertyName("inputBytes")]
    public required long InputBytes { get; init; }

    [JsonPropertyName("intermediateBytes")]
    public required long IntermediateBytes { get; init; }

    [JsonPropertyName("outputBytes")]
    public required long OutputBytes { get; init; }

    [JsonPropertyName("outputRecords")]
    public required long OutputRecords { get; init; }

    /// <summary>Simulated seconds from this job's shuffle's start to its last reducer's last output byte.</summary>
    [JsonPropertyName("shuffleReduceSeconds")]
    public required double ShuffleReduceSeconds { get; init; }

    /// <summary>
    /// When this job's shuffle started after the first job's did: each job's coordinator starts it once its own
    /// servers have mapped, so jobs submitted at once start a little apart.
    /// </summary>
    [JsonPropertyName("startedAfterSeconds")]
    public double StartedAfterSeconds { get; init; }

    /// <summary>The same job alone on the cube (same servers, roots and data); null when it was not run alone.</summary>
    [JsonPropertyName("aloneSeconds")]
    public double? AloneSeconds { get; init; }

    /// <summary><see cref="ShuffleReduceSeconds"/> over <see cref="AloneSeconds"/>.</summary>
    [JsonPropertyName("normalizedTime")]
    public double? NormalizedTime { get; init; }

    /// <summary>Null when not checked; else whether every reduce output equals the reference over this job's input.</summary>
    [JsonPropertyName("verified")]
    public bool? Verified { get; init; }

    [JsonPropertyName("verificationError")]
    public string? VerificationError { get; init; }

    [JsonPropertyName("reducers")]
    public required IReadOnlyList<ReducerOutcome> Reducers { get; init; }
}
