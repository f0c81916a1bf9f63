using Camdoop.Runtime.Node;

namespace Camdoop.ChunkStore;

/// <summary>Tunables of the chunk store. Times in nanoseconds.</summary>
public sealed record ChunkStoreOptions
{
    /// <summary>Receive window each receiver advertises (bytes beyond the last acknowledged one a sender may have out).</summary>
    public int ReceiveWindowBytes { get; init; } = 1 << 20;

    /// <summary>Congestion window a transfer starts with, in frames.</summary>
    public int InitialWindowFrames { get; init; } = 8;

    /// <summary>Below this congestion window (frames) it grows by one frame per acknowledged frame, above by one per window.</summary>
    public int SlowStartFrames { get; init; } = 48;

    public long InitialRetransmitTimeout { get; init; } = 200 * NodeOptions.Millisecond;

    /// <summary>
    /// Floor of the retransmission timeout. Generous: in the emulated testbed dozens of nodes share a few cores and a
    /// round trip can stall for tens of milliseconds without any frame being lost.
    /// </summary>
    public long MinRetransmitTimeout { get; init; } = 50 * NodeOptions.Millisecond;

    public long MaxRetransmitTimeout { get; init; } = 2000 * NodeOptions.Millisecond;

    /// <summary>A transfer (either side) that makes no progress for this long is given up.</summary>
    public long StallTimeout { get; init; } = 15_000 * NodeOptions.Millisecond;

    /// <summary>How long a finished inbound transfer is remembered to answer a sender whose Done was lost.</summary>
    public long Linger { get; init; } = 60_000 * NodeOptions.Millisecond;

    /// <summary>Transfers a server runs at once in each direction; beyond that, offers and reads are answered "busy".</summary>
    public int MaxTransfers { get; init; } = 64;

    /// <summary>How long a lister waits for a server's answer before asking again (at most <see cref="ListAttempts"/> times).</summary>
    public long ListTimeout { get; init; } = 500 * NodeOptions.Millisecond;

    public int ListAttempts { get; init; } = 6;

    /// <summary>
    /// Whether this server restores and moves the replicas it holds as servers come and go (re-replication and
    /// reconciliation). Every node does; simulated experiments leave it off, so that their results stay those of the
    /// job alone, and the tests of it turn it on.
    /// </summary>
    public bool KeepReplicas { get; init; }

    /// <summary>
    /// How long a server must have been unreachable before the copies it held are made again elsewhere (HDFS waits
    /// about ten minutes too): a server that reboots or loses a link for a moment costs no copying.
    /// </summary>
    public long ReReplicateAfter { get; init; } = 600_000 * NodeOptions.Millisecond;

    /// <summary>How long a server waits after it starts before it checks where its replicas belong (its routing settles first).</summary>
    public long ReplicationStartDelay { get; init; } = 30_000 * NodeOptions.Millisecond;

    /// <summary>How often a server checks all its replicas again even when no server came or went (copies that failed are tried again).</summary>
    public long ReplicationScanInterval { get; init; } = 300_000 * NodeOptions.Millisecond;

    /// <summary>Bytes a second a server sends to restore or move replicas, on average (0: no cap); running jobs keep the rest of its links.</summary>
    public long ReReplicateBytesPerSecond { get; init; } = 50L << 20;

    /// <summary>Replica copies a server sends at once.</summary>
    public int ReReplicateConcurrency { get; init; } = 2;

    /// <summary>
    /// How fast the scrubber re-reads this server's replicas to check their checksums, bytes per second: low enough
    /// that the disk stays free for jobs (a scrubbed chunk waits its share of a second before the next starts).
    /// </summary>
    public long ScrubBytesPerSecond { get; init; } = 20_000_000;

    /// <summary>
    /// Time from the end of one scrub pass over every replica to the start of the next; 0 turns scrubbing off. A
    /// server's first pass starts one interval after the last pass it recorded ended (or after it starts, if none).
    /// </summary>
    public long ScrubInterval { get; init; } = 24 * 3600 * 1000 * NodeOptions.Millisecond;

    /// <summary>Frames the chunk store may queue per port in the runtime.</summary>
    public int QueueFrames { get; init; } = 128;
}
