using System.Text.Json.Serialization;

namespace Camdoop.Experiments;

/// <summary>
/// How a TCP Camdoop run's transport and switches were set up and what they did: congestion control, timeouts,
/// buffers, and the losses, marks and timeouts that decide how close the run comes to its switch bound.
/// </summary>
public sealed record TcpRunReport
{
    /// <summary>"newreno" or "dctcp".</summary>
    [JsonPropertyName("congestionControl")]
    public required string CongestionControl { get; init; }

    [JsonPropertyName("minRtoSeconds")]
    public required double MinRtoSeconds { get; init; }

    [JsonPropertyName("portBufferBytes")]
    public required int PortBufferBytes { get; init; }

    /// <summary>Queue bytes at which switches mark ECN-capable frames; 0: no marking.</summary>
    [JsonPropertyName("ecnThresholdBytes")]
    public required int EcnThresholdBytes { get; init; }

    /// <summary>Every receiver's advertised window; 0: unlimited.</summary>
    [JsonPropertyName("receiveWindowBytes")]
    public required int ReceiveWindowBytes { get; init; }

    /// <summary>Each connection's pacing rate, bits per second; 0: unpaced.</summary>
    [JsonPropertyName("pacingBitsPerSecond")]
    public long PacingBitsPerSecond { get; init; }

    [JsonPropertyName("sendBufferBytes")]
    public required int SendBufferBytes { get; init; }

    /// <summary>Streams a server sends at once.</summary>
    [JsonPropertyName("concurrentStreams")]
    public required int ConcurrentStreams { get; init; }

    /// <summary>Streams a receiving end admits at once; 0 when every stream pushes at once.</summary>
    [JsonPropertyName("parallelFetches")]
    public int ParallelFetches { get; init; }

    [JsonPropertyName("nicsPerServer")]
    public required int NicsPerServer { get; init; }

    [JsonPropertyName("connections")]
    public required long Connections { get; init; }

    [JsonPropertyName("segmentsSent")]
    public required long SegmentsSent { get; init; }

    [JsonPropertyName("segmentsResent")]
    public required long SegmentsResent { get; init; }

    [JsonPropertyName("fastRetransmits")]
    public required long FastRetransmits { get; init; }

    /// <summary>Frames switches dropped because the output queue was full.</summary>
    [JsonPropertyName("switchDrops")]
    public required long SwitchDrops { get; init; }

    /// <summary>Acknowledgements a receiver's full queue held back and sent when it had room.</summary>
    [JsonPropertyName("acksDeferred")]
    public long AcksDeferred { get; init; }

    [JsonPropertyName("ecnMarks")]
    public required long EcnMarks { get; init; }

    /// <summary>The longest any switch output queue grew, bytes.</summary>
    [JsonPropertyName("peakQueueBytes")]
    public required long PeakQueueBytes { get; init; }
}
