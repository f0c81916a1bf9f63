using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>A replica a server reported holding, as its last check left it.</summary>
public readonly record struct HeldReplica(Coordinate Server, ReplicaState State);

/// <summary>
/// The replicas every answering server holds, by chunk; <see cref="Answered"/> the servers whose lists are complete
/// (this one included), <see cref="Unanswered"/> those that did not answer (stopped, unreachable, or silent).
/// </summary>
public sealed record ReplicaListResult(
    IReadOnlyDictionary<Key, List<HeldReplica>> Replicas,
    IReadOnlyList<Coordinate> Answered,
    IReadOnlyList<Coordinate> Unanswered);

// Replica listing (fsck): every server of the torus is asked which replicas it holds, page by page in chunk id order;
// a server that is unreachable or stays silent through the retries is named as unanswered.
public sealed partial class ChunkStoreService
{
    private readonly Dictionary<ulong, ReplicaListOperation> _replicaLists = [];

    /// <summary>
    /// Asks every server which replicas it holds (of <paramref name="dataset"/>'s manifest and chunks, or of every
    /// dataset when null) and in what state; <paramref name="done"/> gets them by chunk.
    /// </summary>
    public void ListReplicas(string? dataset, Action<ReplicaListResult> done)
    {
        ArgumentNullException.ThrowIfNull(done);
        var context = Context;
        var servers = context.Torus.All().Where(c => c != context.Self).ToList();
        var list = new ReplicaListOperation(this, NewId(), dataset, servers, done);
        _replicaLists[list.Id] = list;
        list.Start();
    }

    /// <summary>
    /// This server's replicas of <paramref name="dataset"/> (null: all) after <paramref name="after"/>, in id order, at
    /// most <paramref name="most"/>; <paramref name="done"/> gets them on the loop, and whether more follow. Each file
    /// is looked for off the loop: a replica whose file is gone is reported <see cref="ReplicaState.Missing"/>.
    /// </summary>
    private void LocalReplicas(string? dataset, Key? after, int most, Action<List<(Key Chunk, ReplicaState State)>, bool> done)
    {
        var held = new List<StoredChunk>();
        foreach (var c in Local.All)
        {
            if ((dataset is null || c.Meta.Dataset == dataset) && (after is not { } a || c.Meta.Id > a))
            {
                held.Add(c);
            }
        }
        held.Sort(static (x, y) => x.Meta.Id.CompareTo(y.Meta.Id));
        bool more = held.Count > most;
        if (more)
        {
            held.RemoveRange(most, held.Count - most);
        }
        var page = held.Select(c => (Chunk: c.Meta.Id, c.State)).ToList();
        var gone = new bool[held.Count];
        Context.RunOffLoop(
            () =>
            {
                for (int i = 0; i < held.Count; i++)
                {
                    gone[i] = !File.Exists(held[i].DataPath);
                }
            },
            () =>
            {
                for (int i = 0; i < page.Count; i++)
                {
                    if (gone[i])
                    {
                        page[i] = (page[i].Chunk, ReplicaState.Missing);
                    }
                }
                done(page, more);
            });
    }

    private void OnReplicaRequest(Coordinate peer, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadReplicaRequest(payload, out var after, out string? dataset))
        {
            Counters.Malformed++;
            return;
        }
        LocalReplicas(dataset, after, ChunkWire.MaxReplicaEntries, (page, more) =>
        {
            if (!_stopped)
            {
                SendControl(peer, ChunkWire.WriteReplicaReply(_frame, id, more, page));
            }
        });
    }

    private void OnReplicaReply(int peerIndex, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadReplicaReply(payload, out bool more, out var replicas))
        {
            Counters.Malformed++;
            return;
        }
        if (_replicaLists.TryGetValue(id, out var list))
        {
            list.OnReply(peerIndex, more, replicas!);
        }
    }

    private sealed class ReplicaListOperation(ChunkStoreService service, ulong id, string? dataset, List<Coordinate> servers, Action<ReplicaListResult> done)
        : EveryServerOperation<Key?>(service, id, servers, "replica listing")
    {
        private readonly Dictionary<Key, List<HeldReplica>> _found = [];

        public void Start()
        {
            var self = Service.Context.Self;
            Service.LocalReplicas(dataset, null, int.MaxValue, (page, _) =>
            {
                foreach (var (chunk, state) in page)
                {
                    Add(chunk, new HeldReplica(self, state));
                }
                LocalDone();
            });
            AskAll();
        }

        public void OnReply(int peerIndex, bool more, List<(Key Chunk, ReplicaState State)> replicas)
        {
            if (!TryAwaiting(peerIndex, out var peer))
            {
                return;
            }
            // A repeated request's reply may arrive twice: adding is idempotent and the cursor only moves forward.
            foreach (var (chunk, state) in replicas)
            {
                Add(chunk, new HeldReplica(peer.Server, state));
                if (peer.Cursor is not { } after || chunk > after)
                {
                    peer.Cursor = chunk;
                }
            }
            Received(peer, more && replicas.Count > 0);
        }

        protected override void Send(Peer peer) =>
            Service.SendControl(peer.Server, ChunkWire.WriteReplicaRequest(Service._frame, Id, peer.Cursor, dataset));

        protected override void Forget() => Service._replicaLists.Remove(Id);

        protected override void Complete(List<Coordinate> answered, List<Coordinate> unanswered) =>
            done(new ReplicaListResult(_found, answered, unanswered));

        private void Add(Key chunk, HeldReplica replica)
        {
            if (!_found.TryGetValue(chunk, out var holders))
            {
                _found[chunk] = holders = new List<HeldReplica>(3);
            }
            if (!holders.Exists(h => h.Server == replica.Server))
            {
                holders.Add(replica);
            }
        }
    }
}
