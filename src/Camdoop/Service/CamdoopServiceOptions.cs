using Camdoop.MapReduce.Shuffle;
using Camdoop.Runtime.Node;

namespace Camdoop.MapReduce.Service;

/// <summary>Tunables of one server's Camdoop service. Times in nanoseconds, sizes in bytes.</summary>
public sealed record CamdoopServiceOptions
{
    /// <summary>
    /// Frames the Camdoop service may have in the runtime's queue per port. Short on purpose: the service picks the
    /// next frame (acks first, jobs round robin, lowest key first) as late as possible (paper §3, §4.1).
    /// </summary>
    public int RuntimeQueueFrames { get; init; } = 4;

    /// <summary>
    /// Packet-buffer budget per server, split evenly over the inbound streams of all running jobs (paper §4.1; the
    /// testbed used 440 MB). The simulator's default is smaller so that 512 servers fit one machine.
    /// </summary>
    public long MemoryBudgetBytes { get; init; } = 8L * 1024 * 1024;

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

    /// <summary>Bytes of a local run handed to a vertex's merger at a time.</summary>
    public int LocalBlockBytes { get; init; } = 16 * 1024;

    /// <summary>Sort buffer of map tasks the service runs itself.</summary>
    public long MapSortBufferBytes { get; init; } = 64L * 1024 * 1024;

    /// <summary>
    /// Initial per-input buffer of a vertex's merger (grows on demand). 0 sizes it from the budget per inbound stream
    /// (256 bytes to 16 KiB): small when R = N puts thousands of vertices on a server, larger (fewer regrowths) when few.
    /// </summary>
    public int MergerInitialInputBytes { get; init; }

    public void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(RuntimeQueueFrames, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(MemoryBudgetBytes, 0);
        ArgumentOutOfRangeException.ThrowIfLessThan(MinWindowBytes, ShuffleWire.MaxSegmentBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxWindowBytes, MinWindowBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(InitialWindowBytes, ShuffleWire.MaxSegmentBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(MinRetransmitTimeout, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(MaxRetransmitTimeout, MinRetransmitTimeout);
        ArgumentOutOfRangeException.ThrowIfLessThan(ZeroWindowProbeInterval, 1);
        ArgumentOutOfRangeException.ThrowIfLessThan(LocalBlockBytes, 64);
        ArgumentOutOfRangeException.ThrowIfNegative(MergerInitialInputBytes);
    }
}
