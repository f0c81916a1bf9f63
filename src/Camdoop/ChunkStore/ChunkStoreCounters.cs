namespace Camdoop.ChunkStore;

/// <summary>What the chunk store of one server did. Written on the event loop; read for status.</summary>
public sealed class ChunkStoreCounters
{
    /// <summary>Servers this one has seen unreachable past the grace period (their replicas made again elsewhere).</summary>
    public long ServersLost;

    /// <summary>Replica copies sent to restore a chunk's replicas or move it to where it belongs.</summary>
    public long ReplicasCopied;

    public long ReplicaBytesCopied;

    /// <summary>Copies found unneeded: the target already held a good replica.</summary>
    public long ReplicasConfirmed;

    public long ReplicaCopiesFailed;

    /// <summary>Replicas this server dropped because three good ones are held where they belong.</summary>
    public long ReplicasDropped;

    /// <summary>Copies waiting to be sent now.</summary>
    public long ReplicaCopiesPending;

    /// <summary>Removals this server made while some server was away: it kept a tombstone.</summary>
    public long TombstonesKept;

    /// <summary>Tombstones sent to a server that had not applied them.</summary>
    public long TombstonesSent;

    /// <summary>Replicas this server dropped because a tombstone named them.</summary>
    public long TombstoneReplicasDropped;

    /// <summary>Offers of a replica a tombstone here names: refused.</summary>
    public long RemovedOffersRefused;

    public long TransfersStarted;
    public long TransfersSucceeded;
    public long TransfersFailed;
    public long InboundAccepted;
    public long InboundCompleted;
    public long DataFramesSent;
    public long DataBytesSent;
    public long DataFramesReceived;
    public long AcksSent;
    public long DuplicateFrames;
    public long OutOfOrderFrames;
    public long Timeouts;
    public long FastRetransmits;
    public long ChecksumMismatches;
    public long Malformed;
    /// <summary>Data for, or replies to, a transfer this server does not know (late, or forged): dropped.</summary>
    public long UnknownTransfers;
    public long ControlDropped;
    public long Busy;
    public long ReplicasStored;
    public long ReadsServed;
    public long CorruptDetected;
    public long RepairsStarted;
    public long RepairsCompleted;
    public long StorageErrors;
    public long DiskFull;
    /// <summary>Replicas the scrubber checked, and their bytes.</summary>
    public long ScrubChunks;
    public long ScrubBytes;
    /// <summary>Replicas the scrubber found corrupt (or whose file was gone), repaired from another, or could not repair.</summary>
    public long ScrubCorrupt;
    public long ScrubRepaired;
    public long ScrubUnrepairable;
    public long ScrubPasses;
    /// <summary>When the last full scrub pass ended, Unix milliseconds; 0: none yet.</summary>
    public long ScrubLastPassEnd;

    public Dictionary<string, long> ToDictionary() => new(StringComparer.Ordinal)
    {
        ["serversLost"] = ServersLost,
        ["replicasCopied"] = ReplicasCopied,
        ["replicaBytesCopied"] = ReplicaBytesCopied,
        ["replicasConfirmed"] = ReplicasConfirmed,
        ["replicaCopiesFailed"] = ReplicaCopiesFailed,
        ["replicasDropped"] = ReplicasDropped,
        ["replicaCopiesPending"] = ReplicaCopiesPending,
        ["tombstonesKept"] = TombstonesKept,
        ["tombstonesSent"] = TombstonesSent,
        ["tombstoneReplicasDropped"] = TombstoneReplicasDropped,
        ["removedOffersRefused"] = RemovedOffersRefused,
        ["transfersStarted"] = TransfersStarted,
        ["transfersSucceeded"] = TransfersSucceeded,
        ["transfersFailed"] = TransfersFailed,
        ["inboundAccepted"] = InboundAccepted,
        ["inboundCompleted"] = InboundCompleted,
        ["dataFramesSent"] = DataFramesSent,
        ["dataBytesSent"] = DataBytesSent,
        ["dataFramesReceived"] = DataFramesReceived,
        ["acksSent"] = AcksSent,
        ["duplicateFrames"] = DuplicateFrames,
        ["outOfOrderFrames"] = OutOfOrderFrames,
        ["timeouts"] = Timeouts,
        ["fastRetransmits"] = FastRetransmits,
        ["checksumMismatches"] = ChecksumMismatches,
        ["malformed"] = Malformed,
        ["unknownTransfers"] = UnknownTransfers,
        ["controlDropped"] = ControlDropped,
        ["busy"] = Busy,
        ["replicasStored"] = ReplicasStored,
        ["readsServed"] = ReadsServed,
        ["corruptDetected"] = CorruptDetected,
        ["repairsStarted"] = RepairsStarted,
        ["repairsCompleted"] = RepairsCompleted,
        ["storageErrors"] = StorageErrors,
        ["diskFull"] = DiskFull,
        ["scrubChunks"] = ScrubChunks,
        ["scrubBytes"] = ScrubBytes,
        ["scrubCorrupt"] = ScrubCorrupt,
        ["scrubRepaired"] = ScrubRepaired,
        ["scrubUnrepairable"] = ScrubUnrepairable,
        ["scrubPasses"] = ScrubPasses,
        ["scrubLastPassEnd"] = ScrubLastPassEnd,
    };
}
