using System.Text.Json;
using System.Text.Json.Serialization;
using Camdoop.Experiments.NetAgg;
using Camdoop.Simulator.Energy;

namespace Camdoop.Experiments;

/// <summary>Min, median and max over servers.</summary>
public sealed record Distribution(
    [property: JsonPropertyName("min")] long Min,
    [property: JsonPropertyName("median")] long Median,
    [property: JsonPropertyName("max")] long Max)
{
    public static Distribution Of(IReadOnlyCollection<long> values)
    {
        ArgumentNullException.ThrowIfNull(values);
        if (values.Count == 0)
        {
            return new Distribution(0, 0, 0);
        }
        var sorted = values.Order().ToArray();
        return new Distribution(sorted[0], sorted[sorted.Length / 2], sorted[^1]);
    }
}

/// <summary>Shuffle time lower bounds (s) of switched clusters moving the same intermediate data (the Camdoop paper, §5.2).</summary>
public sealed record LowerBounds(
    [property: JsonPropertyName("switch1G")] double Switch1G,
    [property: JsonPropertyName("switch6G")] double Switch6G,
    [property: JsonPropertyName("switch1GOversub")] double Switch1GOversubscribed);

/// <summary>An injected failure: what failed, when, and when a server noticed (its routing changed).</summary>
public sealed record FailureReport(
    [property: JsonPropertyName("what")] string What,
    [property: JsonPropertyName("server")] string? Server,
    [property: JsonPropertyName("link")] string? Link,
    [property: JsonPropertyName("atSeconds")] double AtSeconds,
    [property: JsonPropertyName("detectedAtSeconds")] double? DetectedAtSeconds);

/// <summary>
/// What recovering from the injected failures cost: bytes sent again that had been sent before, map tasks run again,
/// vertices and root reducers taken over, streams restarted from kept bytes or regenerated, and the stretch of the
/// shuffle-and-reduce time over the failure-free baseline T (when it was run).
/// </summary>
public sealed record RecoveryReport(
    [property: JsonPropertyName("resentBytes")] long ResentBytes,
    [property: JsonPropertyName("mapTasksRerun")] long MapTasksRerun,
    [property: JsonPropertyName("verticesAdopted")] long VerticesAdopted,
    [property: JsonPropertyName("restartsFromKept")] long RestartsFromKept,
    [property: JsonPropertyName("regenerations")] long Regenerations,
    [property: JsonPropertyName("resumeRequests")] long ResumeRequests,
    [property: JsonPropertyName("baselineSeconds")] double? BaselineSeconds,
    [property: JsonPropertyName("stretch")] double? Stretch);

/// <summary>One reduce task's outcome.</summary>
public sealed record ReducerOutcome(
    [property: JsonPropertyName("reduceTask")] int ReduceTask,
    [property: JsonPropertyName("server")] string Server,
    [property: JsonPropertyName("seconds")] double Seconds,
    [property: JsonPropertyName("records")] long Records,
    [property: JsonPropertyName("bytes")] long Bytes,
    [property: JsonPropertyName("checksum")] string Checksum,
    [property: JsonPropertyName("outputFile")] string? OutputFile);

/// <summary>
/// What a <see cref="JobSimulation"/> measured. Sizes are bytes: "logical" = key + value bytes (the paper's sizes,
/// which define S); "encoded" adds the record headers (what the shuffle carries). The switch bounds are computed over
/// the encoded intermediate bytes each server holds per reduce task, so they compare like with like.
/// </summary>
public sealed record JobSimulationResult
{
    [JsonPropertyName("torus")]
    public required string Torus { get; init; }

    [JsonPropertyName("servers")]
    public required int Servers { get; init; }

    [JsonPropertyName("job")]
    public required string Job { get; init; }

    [JsonPropertyName("workload")]
    public required string Workload { get; init; }

    [JsonPropertyName("mode")]
    public required string Mode { get; init; }

    [JsonPropertyName("reduceTasks")]
    public required int ReduceTasks { get; init; }

    /// <summary>How the servers were wired: torus, switch, racks, fattree, or grinN (GRIN of degree N).</summary>
    [JsonPropertyName("network")]
    public string Network { get; init; } = "torus";

    /// <summary>Mode tcp: how the servers aggregated on the way to the reducers (direct, rack, binary, chain); null on the torus.</summary>
    [JsonPropertyName("aggregation")]
    public string? Aggregation { get; init; }

    /// <summary>"shallow" or "paper": the tree family the shuffle ran over.</summary>
    [JsonPropertyName("trees")]
    public required string Trees { get; init; }

    /// <summary>False when the time limit passed or a server failed the job before every reducer finished.</summary>
    [JsonPropertyName("completed")]
    public required bool Completed { get; init; }

    /// <summary>Monitoring queries asked during the run (<c>sim run --query</c>), with every round's result.</summary>
    [JsonPropertyName("queries")]
    public IReadOnlyList<SimulatedQueryResult> Queries { get; init; } = [];

    [JsonPropertyName("inputBytes")]
    public required long InputBytes { get; init; }

    [JsonPropertyName("intermediateBytes")]
    public required long IntermediateBytes { get; init; }

    [JsonPropertyName("intermediateEncodedBytes")]
    public required long IntermediateEncodedBytes { get; init; }

    [JsonPropertyName("outputBytes")]
    public required long OutputBytes { get; init; }

    [JsonPropertyName("outputRecords")]
    public required long OutputRecords { get; init; }

    /// <summary>Achieved S = output / intermediate (logical bytes).</summary>
    [JsonPropertyName("outputRatio")]
    public required double OutputRatio { get; init; }

    /// <summary>Simulated seconds from the synchronous shuffle start to the last reducer's last output byte.</summary>
    [JsonPropertyName("shuffleReduceSeconds")]
    public required double ShuffleReduceSeconds { get; init; }

    [JsonPropertyName("lowerBounds")]
    public required LowerBounds LowerBounds { get; init; }

    /// <summary>Frame bytes serialised on all links (headers, acks and retransmissions included).</summary>
    [JsonPropertyName("linkBytes")]
    public required long LinkBytes { get; init; }

    /// <summary>
    /// Bytes on the most loaded directed link, and how long it was busy sending: with the shuffle time, how close the
    /// run came to its own bottleneck (the trees' busiest link, not a switch's).
    /// </summary>
    [JsonPropertyName("busiestLinkBytes")]
    public required long BusiestLinkBytes { get; init; }

    /// <inheritdoc cref="BusiestLinkBytes"/>
    [JsonPropertyName("busiestLinkBusySeconds")]
    public required double BusiestLinkBusySeconds { get; init; }

    [JsonPropertyName("linkFrames")]
    public required long LinkFrames { get; init; }

    /// <summary>Record-stream bytes accepted by receivers, times the links each crossed.</summary>
    [JsonPropertyName("dataByteHops")]
    public required long DataByteHops { get; init; }

    /// <summary>Record-stream bytes put into segments, retransmissions included.</summary>
    [JsonPropertyName("dataBytesSent")]
    public required long DataBytesSent { get; init; }

    [JsonPropertyName("dataFrames")]
    public required long DataFrames { get; init; }

    [JsonPropertyName("ackFrames")]
    public required long AckFrames { get; init; }

    [JsonPropertyName("retransmittedBytes")]
    public required long RetransmittedBytes { get; init; }

    [JsonPropertyName("timeouts")]
    public required long Timeouts { get; init; }

    [JsonPropertyName("framesDropped")]
    public required long FramesDropped { get; init; }

    /// <summary>Switched networks: bytes on the links between switches (both directions), the core an aggregation relieves.</summary>
    [JsonPropertyName("coreLinkBytes")]
    public long CoreLinkBytes { get; init; }

    /// <summary>Mode tcp: bytes the interior vertices of the aggregation trees took in (children's streams and local runs).</summary>
    [JsonPropertyName("mergedBytes")]
    public long MergedBytes { get; init; }

    /// <summary>Mode tcp: bytes the interior vertices sent on to their parents (fewer than merged where they combined).</summary>
    [JsonPropertyName("forwardedBytes")]
    public long ForwardedBytes { get; init; }

    /// <summary>NetAgg: each agg box's merge work and what it forwarded (null on any other network).</summary>
    [JsonPropertyName("aggBoxes")]
    public IReadOnlyList<AggBoxReport>? AggBoxes { get; init; }

    /// <summary>Bytes fed into each server's vertices and reducers (children and local runs).</summary>
    [JsonPropertyName("aggregatedBytes")]
    public required Distribution AggregatedBytes { get; init; }

    /// <summary>
    /// Each server's shuffle buffers at their peak (send buffers, children's stashes, mergers' inputs): the packet
    /// memory a server needed, against the per-server budget the receive windows are split from.
    /// </summary>
    [JsonPropertyName("shuffleBufferPeakBytes")]
    public required Distribution ShuffleBufferPeakBytes { get; init; }

    [JsonPropertyName("reducers")]
    public required IReadOnlyList<ReducerOutcome> Reducers { get; init; }

    /// <summary>Null when not checked; else whether every reduce output equals the reference MapReduce's.</summary>
    [JsonPropertyName("verified")]
    public bool? Verified { get; init; }

    [JsonPropertyName("verificationError")]
    public string? VerificationError { get; init; }

    /// <summary>Why the job failed on a server (corrupt data, a job function threw), if it did.</summary>
    [JsonPropertyName("errors")]
    public required IReadOnlyList<string> Errors { get; init; }

    /// <summary>The injected failures (empty without any).</summary>
    [JsonPropertyName("failures")]
    public IReadOnlyList<FailureReport> Failures { get; init; } = [];

    /// <summary>What recovery cost (null without injected failures).</summary>
    [JsonPropertyName("recovery")]
    public RecoveryReport? Recovery { get; init; }

    /// <summary>The server the job was submitted to, which coordinated it (until it failed, if it did).</summary>
    [JsonPropertyName("coordinator")]
    public string? Coordinator { get; init; }

    /// <summary>Jobs the servers took over from a coordinator that died.</summary>
    [JsonPropertyName("takeovers")]
    public int Takeovers { get; init; }

    /// <summary>How many times the job started over on the servers left (mode tcp, after a lost server): 0 normally.</summary>
    [JsonPropertyName("attempts")]
    public int Attempts { get; init; }

    [JsonPropertyName("wallSeconds")]
    public required double WallSeconds { get; init; }

    /// <summary>Wall time of generating and writing the inputs and of the map tasks (which cost no virtual time, as in the paper).</summary>
    [JsonPropertyName("mapWallSeconds")]
    public required double MapWallSeconds { get; init; }

    /// <summary>Whether the map outputs were run files on disk (else runs in memory).</summary>
    [JsonPropertyName("mapOutputOnDisk")]
    public bool MapOutputOnDisk { get; init; }

    [JsonPropertyName("simulationWallSeconds")]
    public required double SimulationWallSeconds { get; init; }

    /// <summary>
    /// CPU time of the threads that ran the simulation (the driving thread and the partition workers), without the
    /// runtime's GC threads; the process's CPU time where thread CPU time is not available (not Linux).
    /// </summary>
    [JsonPropertyName("simulationCpuSeconds")]
    public required double SimulationCpuSeconds { get; init; }

    [JsonPropertyName("events")]
    public required long Events { get; init; }

    [JsonPropertyName("frameEvents")]
    public required long FrameEvents { get; init; }

    /// <summary>
    /// With <see cref="JobSimulationOptions.TraceEvents"/>: the hash of every event (time, kind, server, port, frame
    /// length) in 16 hex digits; equal hashes, equal runs. Null otherwise.
    /// </summary>
    [JsonPropertyName("eventTraceHash")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? EventTraceHash { get; init; }

    /// <summary>"horizontal" or "vertical" when several jobs ran at once; null for one job.</summary>
    [JsonPropertyName("placement")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public string? Placement { get; init; }

    /// <summary>
    /// Each job, when several ran at once (null for one job run alone). The other fields then describe the run as a
    /// whole: sizes summed over the jobs, the time until the last of them finished, the first job's name, R and mode.
    /// </summary>
    [JsonPropertyName("jobs")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public IReadOnlyList<ConcurrentJobResult>? Jobs { get; init; }

    /// <summary>The transport and switches of a TCP Camdoop run (null in the Camdoop modes).</summary>
    [JsonPropertyName("tcp")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public TcpRunReport? Tcp { get; init; }

    /// <summary>How work was priced and what it cost (null when compute was off).</summary>
    [JsonPropertyName("compute")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public ComputeReport? Compute { get; init; }

    /// <summary>What the network's ports spent on the job under the chosen energy model (null when not measured).</summary>
    [JsonPropertyName("energy")]
    [JsonIgnore(Condition = JsonIgnoreCondition.WhenWritingNull)]
    public NetworkEnergy? Energy { get; init; }

    /// <summary>The machine whose wall-clock and CPU times these are (null in results built by hand).</summary>
    [JsonPropertyName("machine")]
    public HostMachine? Machine { get; init; }

    private static readonly JsonSerializerOptions JsonOptions = new() { WriteIndented = true };

    public string ToJson() => JsonSerializer.Serialize(this, JsonOptions);
}
