namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>How a node's TCP behaves. Times in nanoseconds.</summary>
public sealed record TcpOptions
{
    /// <summary>Payload bytes per segment; the largest that fits a jumbo frame by default.</summary>
    public int SegmentSize { get; init; } = TcpWire.MaxSegmentSize;

    /// <summary>Congestion window a connection starts with, in segments (RFC 6928's ten).</summary>
    public int InitialWindowSegments { get; init; } = 10;

    /// <summary>Smallest retransmission timeout (Linux: 200 ms; data-centre stacks lower it to about 1 ms).</summary>
    public long MinRto { get; init; } = 200_000_000;

    /// <summary>Retransmission timeout before the first round-trip sample (RFC 6298: 1 s).</summary>
    public long InitialRto { get; init; } = 1_000_000_000;

    /// <summary>Largest retransmission timeout after backing off.</summary>
    public long MaxRto { get; init; } = 60_000_000_000;

    /// <summary>DCTCP: segments are ECN-capable and the window shrinks by the fraction of marked bytes.</summary>
    public bool Dctcp { get; init; }

    /// <summary>DCTCP's gain g, the weight of the newest window's marked fraction in its estimate.</summary>
    public double DctcpGain { get; init; } = 1.0 / 16;

    /// <summary>Out-of-order bytes a receiver keeps per connection; segments beyond are dropped.</summary>
    public int ReorderBufferBytes { get; init; } = 4 * 1024 * 1024;

    /// <summary>
    /// The receive window every receiver advertises, bytes: a sender never has more than this in flight, whatever its
    /// congestion window. 0: unlimited (the receiver keeps up).
    /// </summary>
    public int ReceiveWindowBytes { get; init; }

    /// <summary>
    /// Each connection sends at most this many bits per second (segment and header), spacing its segments evenly, as
    /// Linux's fq pacing does; 0: as fast as the window and the NIC allow.
    /// </summary>
    public long PacingBitsPerSecond { get; init; }

    public void Validate()
    {
        if (SegmentSize is < 1 or > TcpWire.MaxSegmentSize)
        {
            throw new ArgumentOutOfRangeException(nameof(SegmentSize), SegmentSize, $"a segment carries 1 to {TcpWire.MaxSegmentSize} bytes");
        }
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(InitialWindowSegments);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(MinRto);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(InitialRto);
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxRto, MinRto);
        if (DctcpGain is <= 0 or > 1 || double.IsNaN(DctcpGain))
        {
            throw new ArgumentOutOfRangeException(nameof(DctcpGain), DctcpGain, "a gain is in (0, 1]");
        }
        ArgumentOutOfRangeException.ThrowIfNegative(ReorderBufferBytes);
        ArgumentOutOfRangeException.ThrowIfNegative(PacingBitsPerSecond);
        if (ReceiveWindowBytes != 0 && ReceiveWindowBytes < SegmentSize)
        {
            throw new ArgumentOutOfRangeException(nameof(ReceiveWindowBytes), ReceiveWindowBytes, "a receive window holds at least one segment (0: unlimited)");
        }
    }
}
