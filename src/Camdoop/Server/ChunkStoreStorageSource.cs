using Camdoop.ChunkStore;
using Camdoop.Monitoring.Storage;

namespace Camdoop.Server;

/// <summary>
/// A server's <see cref="ChunkStoreService"/> as the storage table reads it: its replicas, re-replication and
/// scrubbing. Lives with the server's stack, which knows both services, so that monitoring need not know the store.
/// </summary>
public sealed class ChunkStoreStorageSource(ChunkStoreService store) : IStorageSource
{
    private readonly ChunkStoreService _store = store ?? throw new ArgumentNullException(nameof(store));

    public StorageStats Read()
    {
        var c = _store.Counters;
        var local = _store.Local;
        return new StorageStats(
            Replicas: local.Count,
            BytesStored: local.BytesStored,
            CopiesPending: _store.ReplicaCopiesPending,
            ReplicasCopied: c.ReplicasCopied,
            BytesCopied: c.ReplicaBytesCopied,
            ReplicasConfirmed: c.ReplicasConfirmed,
            ReplicasDropped: c.ReplicasDropped,
            CopiesFailed: c.ReplicaCopiesFailed,
            ServersLost: _store.LostServers.Count(),
            ScrubPasses: c.ScrubPasses,
            ScrubbedReplicas: c.ScrubChunks,
            ScrubbedBytes: c.ScrubBytes,
            CorruptFound: c.ScrubCorrupt,
            Repaired: c.ScrubRepaired,
            Unrepairable: c.ScrubUnrepairable,
            Decommissioned: _store.Decommissioned.Count(),
            Tombstones: _store.Tombstones.Count());
    }
}
