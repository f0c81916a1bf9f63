using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

// Tombstones: a dataset removed while some server was away must stay removed when that server comes back with its
// replicas, and must not be copied back by re-replication. The remover reads the manifest first (which replicas
// make the dataset), deletes as before, and when a server did not apply the removal it keeps a tombstone and gives a
// copy to every server that did. Every holder sends it to each pending server once that server is reachable (again
// every few seconds until it answers); the server drops the replicas it names and answers part by part. A server
// that holds a tombstone refuses an offer of a replica it names and sends the tombstone to the offerer, so a server
// that scans before its tombstones arrive cannot bring the data back. Kept on disk (data directory, tombstones/)
// until every pending server has applied it.
public sealed partial class ChunkStoreService
{
    private static readonly long TombstoneResend = 5_000 * Runtime.Node.NodeOptions.Millisecond;

    private readonly Dictionary<(string Name, ulong Checksum), HeldTombstone> _tombstones = [];

    /// <summary>Tombstones held here (removed datasets some server has not applied yet).</summary>
    public IEnumerable<Tombstone> Tombstones => _tombstones.Values.Select(t => t.Tombstone);

    private sealed class HeldTombstone(Tombstone tombstone)
    {
        public Tombstone Tombstone { get; } = tombstone;

        /// <summary>Parts each pending server has applied.</summary>
        public Dictionary<int, HashSet<int>> Applied { get; } = [];

        public Dictionary<int, long> SentAt { get; } = [];
    }

    private string TombstoneDirectory => Path.Combine(Context.DataDirectory, "tombstones");

    /// <summary>Loads the tombstones an earlier run kept (at start, before the loop runs).</summary>
    private void LoadTombstones()
    {
        if (!Directory.Exists(TombstoneDirectory))
        {
            return;
        }
        foreach (var path in Directory.EnumerateFiles(TombstoneDirectory))
        {
            var tombstone = Path.GetExtension(path) == ".tmp" ? null : Tombstone.Decode(File.ReadAllBytes(path), Context.Torus.Count);
            if (tombstone is null || tombstone.Pending.Count == 0)
            {
                File.Delete(path); // a torn write, or one already applied everywhere
                continue;
            }
            _tombstones[(tombstone.Name, tombstone.ManifestChecksum)] = new HeldTombstone(tombstone);
        }
        if (_tombstones.Count > 0)
        {
            Context.Log(LogLevel.Info, $"chunk store: {_tombstones.Count} tombstones of removed datasets kept");
        }
    }

    /// <summary>After a removal: keeps a tombstone when a server did not apply it, and gives it to those that did.</summary>
    private void KeepTombstone(DatasetManifest manifest, ulong manifestChecksum, IEnumerable<Coordinate> applied)
    {
        var torus = Context.Torus;
        var done = applied.Select(torus.IndexOf).Append(torus.IndexOf(Context.Self)).ToHashSet();
        var pending = Enumerable.Range(0, torus.Count).Where(i => !done.Contains(i)).ToList();
        if (pending.Count == 0)
        {
            return;
        }
        var tombstone = new Tombstone(manifest.Name, manifestChecksum, manifest.Chunks.Select(c => c.Id), pending);
        _tombstones[(tombstone.Name, tombstone.ManifestChecksum)] = new HeldTombstone(tombstone);
        SaveTombstone(tombstone);
        Counters.TombstonesKept++;
        Context.Log(LogLevel.Info, $"chunk store: dataset '{manifest.Name}' removed while {pending.Count} servers were away; a tombstone is kept until they apply it");
        foreach (var server in done.Where(i => i != torus.IndexOf(Context.Self)))
        {
            SendTombstone(tombstone, torus.CoordinateOf(server));
        }
    }

    /// <summary>Every second: sends each tombstone to the pending servers that are reachable and have not answered lately.</summary>
    private void SendTombstones(long now)
    {
        foreach (var held in _tombstones.Values)
        {
            foreach (int server in held.Tombstone.Pending)
            {
                var coordinate = Context.Torus.CoordinateOf(server);
                if (!_routing.IsReachable(coordinate) || (held.SentAt.TryGetValue(server, out long at) && now - at < TombstoneResend))
                {
                    continue;
                }
                held.SentAt[server] = now;
                SendTombstone(held.Tombstone, coordinate);
            }
        }
    }

    private void SendTombstone(Tombstone tombstone, Coordinate server)
    {
        for (int part = 0; part < tombstone.Parts; part++)
        {
            SendControl(server, TombstoneWire.WritePart(_frame, tombstone, part));
        }
        Counters.TombstonesSent++;
    }

    /// <summary>A tombstone naming <paramref name="meta"/>, if this server holds one.</summary>
    private Tombstone? TombstoneOf(ChunkMeta meta)
    {
        foreach (var held in _tombstones.Values)
        {
            if (held.Tombstone.Covers(meta))
            {
                return held.Tombstone;
            }
        }
        return null;
    }

    private void OnTombstone(Coordinate peer, int peerIndex, ReadOnlySpan<byte> payload)
    {
        var torus = Context.Torus;
        if (!TombstoneWire.TryReadPart(payload, torus.Count, out var part, out int index, out int parts))
        {
            Counters.Malformed++;
            return;
        }
        var tombstone = part!;
        // Drop what the part names: its data chunks, and the manifest with the removed one's checksum.
        var removed = Local.All.Where(c => tombstone.Covers(c.Meta)).ToList();
        AbandonSending(tombstone.Covers, $"dataset '{tombstone.Name}' was removed");
        foreach (var chunk in removed)
        {
            if (DropReplica(chunk.Meta.Id))
            {
                Counters.TombstoneReplicasDropped++;
            }
        }
        if (removed.Count > 0)
        {
            Context.Log(LogLevel.Info, $"chunk store: dropped {removed.Count} replicas of dataset '{part!.Name}', removed while this server was away");
        }
        int self = torus.IndexOf(Context.Self);
        var key = (part!.Name, part.ManifestChecksum);
        var others = part.Pending.Where(i => i != self).ToList();
        if (_tombstones.TryGetValue(key, out var held))
        {
            held.Tombstone.Ids.UnionWith(part.Ids);
            held.Tombstone.Pending.Remove(self);
        }
        else if (others.Count > 0)
        {
            // Another server is still away: this one keeps a copy too, so the removal outlives the remover.
            held = new HeldTombstone(new Tombstone(part.Name, part.ManifestChecksum, part.Ids, others));
            _tombstones[key] = held;
        }
        if (held is not null && index == parts - 1)
        {
            SaveTombstone(held.Tombstone);
        }
        SendControl(peer, TombstoneWire.WriteApplied(_frame, part.Name, part.ManifestChecksum, index));
    }

    private void OnTombstoneApplied(int peerIndex, ReadOnlySpan<byte> payload)
    {
        if (!TombstoneWire.TryReadApplied(payload, out string? name, out ulong checksum, out int part))
        {
            Counters.Malformed++;
            return;
        }
        if (!_tombstones.TryGetValue((name!, checksum), out var held) || !held.Tombstone.Pending.Contains(peerIndex))
        {
            return;
        }
        if (!held.Applied.TryGetValue(peerIndex, out var parts))
        {
            held.Applied[peerIndex] = parts = [];
        }
        parts.Add(part);
        if (parts.Count < held.Tombstone.Parts)
        {
            return;
        }
        held.Tombstone.Pending.Remove(peerIndex);
        held.Applied.Remove(peerIndex);
        if (held.Tombstone.Pending.Count == 0)
        {
            _tombstones.Remove((name!, checksum));
            Context.Log(LogLevel.Info, $"chunk store: the removal of dataset '{name}' is applied everywhere; its tombstone is dropped");
        }
        SaveTombstone(held.Tombstone);
    }

    /// <summary>Writes (or, once applied everywhere, deletes) a tombstone's file, off the loop.</summary>
    private void SaveTombstone(Tombstone tombstone) =>
        SaveStateFile(Path.Combine(TombstoneDirectory, tombstone.FileName), tombstone.Pending.Count == 0 ? null : tombstone.Encode(),
            $"the tombstone of '{tombstone.Name}'");
}
