namespace Camdoop.MapReduce.DirectShuffle;

/// <summary>Tunables of one server's direct shuffle (TCP Camdoop). Sizes in bytes.</summary>
public sealed record DirectShuffleOptions
{
    /// <summary>
    /// Streams a server sends at once; the others wait their turn. A server sends one stream per reduce task rooted
    /// elsewhere (R - 1 of them at R = N): all at once, each would hold a merger and a send buffer at the same time.
    /// </summary>
    public int ConcurrentStreams { get; init; } = 8;

    /// <summary>Initial per-input buffer of a reducer's merger (grows on demand): it has one input per server.</summary>
    public int ReducerInputBytes { get; init; } = 4 * 1024;

    /// <summary>Bytes of a local run handed to a merger at a time.</summary>
    public int LocalBlockBytes { get; init; } = 16 * 1024;

    /// <summary>
    /// Bytes of streams that arrived before their job started here, kept until it does: on real servers the start
    /// reaches every server at a slightly different time, and the senders may be first. Beyond it, streams are dropped.
    /// </summary>
    public long MaxEarlyBytes { get; init; } = 64L * 1024 * 1024;

    public void Validate()
    {
        ArgumentOutOfRangeException.ThrowIfNegative(MaxEarlyBytes);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(ConcurrentStreams);
        ArgumentOutOfRangeException.ThrowIfLessThan(ReducerInputBytes, 64);
        ArgumentOutOfRangeException.ThrowIfLessThan(LocalBlockBytes, 64);
    }
}
