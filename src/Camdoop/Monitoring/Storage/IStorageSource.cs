namespace Camdoop.Monitoring.Storage;

/// <summary>
/// One server's chunk store: a row of <see cref="Tables.MonitorTables.Storage"/> without the server, each field the
/// column of the same name (the table describes them).
/// </summary>
public readonly record struct StorageStats(
    long Replicas,
    long BytesStored,
    long CopiesPending,
    long ReplicasCopied,
    long BytesCopied,
    long ReplicasConfirmed,
    long ReplicasDropped,
    long CopiesFailed,
    long ServersLost,
    long ScrubPasses,
    long ScrubbedReplicas,
    long ScrubbedBytes,
    long CorruptFound,
    long Repaired,
    long Unrepairable,
    long Decommissioned = 0,
    long Tombstones = 0);

/// <summary>
/// The chunk store of one server, as monitoring reads it: the monitoring service is given one when it is built, so
/// it knows nothing of the chunk store. A server without one has no storage row.
/// </summary>
public interface IStorageSource
{
    /// <summary>The store's replicas and counters now, read once per query round.</summary>
    StorageStats Read();
}
