using Camdoop.KeyRouting;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

// Re-replication and reconciliation: every server keeps the replicas it holds where they belong as servers come and
// go. A server unreachable past the grace period (ChunkStoreOptions.ReReplicateAfter) is taken for lost: the
// placement of every chunk is computed without it, and each holder offers its replica to the servers that now own a
// replica position and may lack it. An offer to a server that holds a good replica costs one frame each way
// (AlreadyStored); a server already receiving the chunk from another holder answers Busy, so one copy is sent. A
// server that holds a replica of a chunk whose positions all hold good replicas elsewhere drops its own: the one that
// stood in for a lost server once that server is back, or a returning server's copy of a chunk re-replicated while
// it was away. Copies run a few at a time, at a capped average rate, so running jobs keep their links.
public sealed partial class ChunkStoreService
{
    private readonly Dictionary<int, long> _unreachableSince = [];
    private readonly Queue<ReplicaCopy> _copies = new();
    private readonly HashSet<(Key Chunk, int Server)> _queued = [];
    private readonly HashSet<(Key Chunk, int Server)> _confirmed = [];
    // Chunks held here but placed elsewhere, and the positions that must confirm a good replica before it is dropped.
    private readonly Dictionary<Key, int[]> _placedElsewhere = [];
    private ServerSet? _lost;
    private long _startedAt = -1;
    private long _nextScanAt;
    private bool _rescan = true;
    private int _copiesRunning;
    private long _rateDebt;
    private long _rateAt;
    private bool _joined;

    /// <summary>Servers this one takes for lost (unreachable past the grace period).</summary>
    public IEnumerable<Coordinate> LostServers => _lost?.Members().Select(Context.Torus.CoordinateOf) ?? [];

    /// <summary>Replica copies queued or running.</summary>
    public int ReplicaCopiesPending => _copies.Count + _copiesRunning;

    private readonly record struct ReplicaCopy(Key Chunk, int Target);

    /// <summary>Runs every second from the sweep: notices servers lost and back, and keeps the copies going.</summary>
    private void KeepReplicas(long now)
    {
        if (!Options.KeepReplicas)
        {
            return;
        }
        if (_startedAt < 0)
        {
            _startedAt = now;
            _lost = new ServerSet(Context.Torus.Count);
        }
        // A short grace (a test's, a small cube's) need not wait for the whole start delay either.
        if (now - _startedAt < Math.Min(Options.ReplicationStartDelay, Options.ReReplicateAfter))
        {
            return;
        }
        if (!_joined)
        {
            _joined = true;
            AnnounceJoined();
        }
        if (TrackMembership(now))
        {
            // Placement changed: what a server was known to hold may have been dropped since (a stand-in drops its copy
            // when the server it stood in for is back), so every position is asked again.
            _confirmed.Clear();
            _rescan = true;
        }
        if (_rescan || now >= _nextScanAt)
        {
            _rescan = false;
            _nextScanAt = now + Options.ReplicationScanInterval;
            Scan();
        }
        Pump(now);
        Counters.ReplicaCopiesPending = ReplicaCopiesPending;
    }

    /// <summary>Updates which servers are lost; true when that set changed.</summary>
    private bool TrackMembership(long now)
    {
        var torus = Context.Torus;
        bool changed = false;
        for (int i = 0; i < torus.Count; i++)
        {
            var server = torus.CoordinateOf(i);
            if (server == Context.Self || _routing.IsReachable(server))
            {
                if (_unreachableSince.Remove(i))
                {
                    // Back, after a moment or for good: it may have come back with an empty disk, so what it was
                    // known to hold is asked again.
                    Forget(i);
                    changed = true;
                }
                if (_lost!.Contains(i))
                {
                    _lost.Remove(i);
                    Context.Log(LogLevel.Info, $"chunk store: server {server.Name} is back; its replicas are reconciled");
                }
                continue;
            }
            if (!_unreachableSince.TryGetValue(i, out long since))
            {
                _unreachableSince[i] = now;
            }
            else if (now - since >= Options.ReReplicateAfter && !_lost!.Contains(i))
            {
                _lost.Add(i);
                changed = true;
                Counters.ServersLost++;
                Context.Log(LogLevel.Info, $"chunk store: server {server.Name} unreachable for {(now - since) / 1_000_000_000.0:0} s; its replicas are made again elsewhere");
            }
        }
        return changed;
    }

    /// <summary>Tells every other server this one has started: it may be back with an empty disk.</summary>
    private void AnnounceJoined()
    {
        foreach (var server in Context.Torus.All())
        {
            if (server != Context.Self)
            {
                SendControl(server, ChunkWire.WriteHeader(_frame, ChunkMessage.Joined, 0));
            }
        }
    }

    private void OnJoined(int server)
    {
        if (Options.KeepReplicas && _lost is not null)
        {
            Forget(server);
            _rescan = true;
        }
    }

    /// <summary>Forgets what <paramref name="server"/> was known to hold.</summary>
    private void Forget(int server) => _confirmed.RemoveWhere(c => c.Server == server);

    /// <summary>Queues a copy for every replica position of every chunk held here that may lack it.</summary>
    private void Scan()
    {
        var view = ServerSet.AllOf(Context.Torus);
        foreach (int lost in _lost!.Members())
        {
            view.Remove(lost);
        }
        foreach (int set in _decommissioned)
        {
            view.Remove(set);
        }
        int self = Context.Torus.IndexOf(Context.Self);
        _placedElsewhere.Clear();
        foreach (var chunk in Local.All)
        {
            if (chunk.Corrupt)
            {
                continue; // a bad replica is repaired by a read or the scrubber, never copied
            }
            var id = chunk.Meta.Id;
            var targets = ChunkPlacement.Targets(_routing.Mapper, id, view);
            bool placedHere = false;
            bool positionAway = false;
            foreach (var target in targets)
            {
                int t = Context.Torus.IndexOf(target);
                if (t == self)
                {
                    placedHere = true;
                    continue;
                }
                if (!_routing.IsReachable(target))
                {
                    positionAway = true; // its server is away (within its grace): nothing can be confirmed there
                    continue;
                }
                if (!_confirmed.Contains((id, t)) && _queued.Add((id, t)))
                {
                    _copies.Enqueue(new ReplicaCopy(id, t));
                }
            }
            if (!placedHere && !positionAway && targets.Count >= ChunkPlacement.Replicas)
            {
                // Held here but placed elsewhere: dropped once every position confirms a good replica.
                _placedElsewhere[id] = [.. targets.Select(Context.Torus.IndexOf)];
                DropIfPlacedElsewhere(id);
            }
        }
    }

    /// <summary>Starts queued copies while fewer than the concurrency run and the rate allows.</summary>
    private void Pump(long now)
    {
        long rate = Options.ReReplicateBytesPerSecond;
        if (rate > 0)
        {
            // The debt of bytes sent falls at the rate; a copy starts only when it is paid off.
            long paid = (long)((now - _rateAt) / 1e9 * rate);
            _rateDebt = Math.Max(0, _rateDebt - paid);
            _rateAt = now;
        }
        while (_copiesRunning < Options.ReReplicateConcurrency && _copies.Count > 0 && (rate <= 0 || _rateDebt == 0))
        {
            var copy = _copies.Dequeue();
            _queued.Remove((copy.Chunk, copy.Target));
            if (!Local.TryGet(copy.Chunk, out var held) || held.Corrupt)
            {
                continue;
            }
            var target = Context.Torus.CoordinateOf(copy.Target);
            if (!_routing.IsReachable(target))
            {
                continue;
            }
            FileChunkSource source;
            try
            {
                source = new FileChunkSource(held.DataPath);
            }
            catch (IOException)
            {
                continue; // gone from the disk: a read or the scrubber restores it
            }
            _copiesRunning++;
            var meta = held.Meta;
            StartOutbound(target, TransferPurpose.Store, meta, source, outcome =>
            {
                source.Dispose();
                _copiesRunning--;
                if (outcome.Ok)
                {
                    _confirmed.Add((meta.Id, copy.Target));
                    if (outcome.AlreadyStored)
                    {
                        Counters.ReplicasConfirmed++;
                    }
                    else
                    {
                        Counters.ReplicasCopied++;
                        Counters.ReplicaBytesCopied += meta.Length;
                        _rateDebt += meta.Length;
                    }
                    DropIfPlacedElsewhere(meta.Id);
                }
                else
                {
                    Counters.ReplicaCopiesFailed++; // tried again at the next scan
                }
                if (!_stopped)
                {
                    Pump(Now); // the next copy need not wait for the next sweep
                }
            }, lane: WellKnownServices.ReReplication);
        }
    }

    /// <summary>Drops this server's replica of <paramref name="id"/> once every replica position confirmed a good one.</summary>
    private void DropIfPlacedElsewhere(Key id)
    {
        // Only the positions as placed now count: a server confirmed before it was lost no longer holds a position.
        if (!_placedElsewhere.TryGetValue(id, out var positions) || !positions.All(t => _confirmed.Contains((id, t))))
        {
            return;
        }
        _placedElsewhere.Remove(id);
        if (DropReplica(id))
        {
            Counters.ReplicasDropped++;
        }
    }

    /// <summary>
    /// Forgets one replica now and deletes its files off the loop, after any write of the same chunk; false when it is
    /// not held. Files that stay (an I/O error) come back at the next start, and whatever dropped it drops it again.
    /// </summary>
    private bool DropReplica(in Key id)
    {
        if (!Local.Forget(id, out var chunk))
        {
            return false;
        }
        _writes!.Run(id, () =>
        {
            try
            {
                LocalChunkStore.DeleteFiles(chunk);
            }
            catch (IOException)
            {
                // Dropped again after the next start.
            }
        }, () => { });
        return true;
    }

    /// <summary>Whether a replica of <paramref name="chunk"/> is being received from some server now.</summary>
    private bool IsReceiving(in Key chunk)
    {
        foreach (var t in _inbound.Values)
        {
            if (!t.Finished && t.Meta.Id == chunk)
            {
                return true;
            }
        }
        return false;
    }
}
