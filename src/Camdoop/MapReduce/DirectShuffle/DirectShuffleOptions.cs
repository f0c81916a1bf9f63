using Camdoop.Runtime.Transport.Tcp;

namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>Tunables of one server's direct shuffle (TCP Camdoop). Sizes in bytes.</summary>
public sealed record DirectShuffleOptions
{
    /// <summary>
    /// Streams a server sends at once; the others wait their turn. A server sends one stream per reduce task rooted
    /// elsewhere (R - 1 of them at R = N): all at once, each would hold a merger and a send buffer at the same time.
    /// </summary>
    public int ConcurrentStreams { get; init; } = 8;

    /// <summary>
    /// Every sender sends as soon as it can, unadmitted: the incast-prone baseline. Otherwise each receiving end (a
    /// reducer, an interior vertex) admits its senders <see cref="AdmissionBound"/> at a time. Every server of a
    /// cluster must agree: a sender waiting for an admission that a pushing receiver never sends waits for ever.
    /// </summary>
    public bool Push { get; init; }

    /// <summary>
    /// Streams a receiving end takes at once (Hadoop's parallel copies); 0: chosen from the assumed buffer, starting at
    /// <see cref="AdmissionBound"/> and growing while the streams that ended were short (<see cref="Admission"/>).
    /// </summary>
    public int ParallelFetches { get; init; }

    /// <summary>Bytes of switch buffer a receiver can assume in front of its link (its port's queue, times its NICs).</summary>
    public long AssumedBufferBytes { get; init; } = 256 * 1024;

    /// <summary>Bytes a new stream sends before its first acknowledgement (TCP's initial window).</summary>
    public int InitialWindowBytes { get; init; } = 10 * TcpWire.MaxSegmentSize;

    /// <summary>Initial per-input buffer of a reducer's merger (grows on demand): it has one input per server.</summary>
    public int ReducerInputBytes { get; init; } = 4 * 1024;

    /// <summary>Bytes of a local run handed to a merger at a time.</summary>
    public int LocalBlockBytes { get; init; } = 16 * 1024;

    /// <summary>
    /// Bytes of streams that arrived before their job started here, kept until it does: on real servers the start
    /// reaches every server at a slightly different time, and the senders may be first. Beyond it, streams are dropped.
    /// </summary>
    public long MaxEarlyBytes { get; init; } = 64L * 1024 * 1024;

    /// <summary>
    /// Streams a receiving end admits at once: <see cref="ParallelFetches"/> when set, else as many as the assumed
    /// buffer holds of their initial windows, so that the admitted streams' first flights together fit in the queue
    /// in front of the receiver and none is lost to a timeout. Unbounded with <see cref="Push"/>.
    /// </summary>
    public int AdmissionBound => Push ? int.MaxValue
        : ParallelFetches > 0 ? ParallelFetches
        : (int)Math.Clamp(AssumedBufferBytes / InitialWindowBytes, 1, int.MaxValue);

    public void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfNegative(MaxEarlyBytes);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(ConcurrentStreams);
        ArgumentOutOfRangeException.ThrowIfNegative(ParallelFetches);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(AssumedBufferBytes);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(InitialWindowBytes);
        ArgumentOutOfRangeException.ThrowIfLessThan(ReducerInputBytes, 64);
        ArgumentOutOfRangeException.ThrowIfLessThan(LocalBlockBytes, 64);
    }
}
