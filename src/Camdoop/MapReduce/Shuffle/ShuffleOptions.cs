using Camdoop.Runtime.Node;

namespace Camdoop.MapReduce.Shuffle;

/// <summary>Tunables of one server's shuffle transport. Times in nanoseconds, sizes in bytes.</summary>
public sealed record ShuffleOptions
{
    /// <summary>
    /// Frames the Camdoop service may have in the runtime's queue per port. Short on purpose: the service picks the
    /// next frame (acks first, jobs round robin, lowest key first) as late as possible (the Camdoop paper, §3 and §4.1).
    /// </summary>
    public int RuntimeQueueFrames { get; init; } = 4;

    /// <summary>Smallest receive window per inbound stream, whatever the budget says.</summary>
    public int MinWindowBytes { get; init; } = 2 * ShuffleWire.MaxSegmentBytes;

    /// <summary>Largest receive window (and send buffer) per stream: a few bandwidth-delay products of one hop.</summary>
    public int MaxWindowBytes { get; init; } = 128 * 1024;

    /// <summary>What a sender may have unacknowledged before it hears its parent's real window.</summary>
    public int InitialWindowBytes { get; init; } = 2 * ShuffleWire.MaxSegmentBytes;

    /// <summary>Floor of the retransmission timeout (the measured RTT sets it above this).</summary>
    public long MinRetransmitTimeout { get; init; } = 10 * NodeOptions.Millisecond;

    public long MaxRetransmitTimeout { get; init; } = 1000 * NodeOptions.Millisecond;

    /// <summary>How long a sender whose window is closed waits before probing (a lost window update must not deadlock).</summary>
    public long ZeroWindowProbeInterval { get; init; } = 50 * NodeOptions.Millisecond;

    /// <summary>
    /// The longest a sender waits between tries without progress, however often it has backed off. Without it, a
    /// window blocked for a while on a slow link (a 1 s RTO doubled ten times) slept for 17 minutes, and one lost
    /// window update then stalled its reduce task that long.
    /// </summary>
    public long MaxBackoffWait { get; init; } = 4000 * NodeOptions.Millisecond;

    public void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(RuntimeQueueFrames, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(MinWindowBytes, ShuffleWire.MaxSegmentBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxWindowBytes, MinWindowBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(InitialWindowBytes, ShuffleWire.MaxSegmentBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(MinRetransmitTimeout, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxRetransmitTimeout, MinRetransmitTimeout);
        ArgumentOutOfRangeException.ThrowIfLessThan(ZeroWindowProbeInterval, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxBackoffWait, MaxRetransmitTimeout);
    }
}
