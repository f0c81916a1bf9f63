namespace Camdoop.Experiments.Traffic;

/// <summary>What a <see cref="TcpTraffic"/> run measured.</summary>
public sealed record TcpTrafficResult
{
    /// <summary>Virtual time when the last flow's final byte was delivered (ns).</summary>
    public required long Duration { get; init; }

    public required bool AllDone { get; init; }

    /// <summary>Per flow, the virtual time its last byte was delivered (ns), or -1 if it never was.</summary>
    public required IReadOnlyList<long> Completion { get; init; }

    public required long PayloadBytes { get; init; }

    /// <summary>Bytes that reached a receiver different from what was sent (a transport bug if ever above 0).</summary>
    public required long CorruptBytes { get; init; }

    public required long Timeouts { get; init; }

    public required long FastRetransmits { get; init; }

    public required long SegmentsResent { get; init; }

    public required long SwitchDrops { get; init; }

    public required long EcnMarks { get; init; }

    /// <summary>Frames serialised onto any link direction: a frame crossing a switch counts two hops.</summary>
    public required long PacketHops { get; init; }

    /// <summary>Frames that left a server (segments and acknowledgements).</summary>
    public required long ServerFrames { get; init; }

    public required long Events { get; init; }

    public required double CpuSeconds { get; init; }

    public required TimeSpan WallTime { get; init; }
}
