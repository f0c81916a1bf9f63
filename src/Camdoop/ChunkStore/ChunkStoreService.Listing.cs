using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>The datasets found by a listing, and the servers that did not answer it.</summary>
public sealed record ListResult(IReadOnlyList<ChunkMeta> Manifests, int ServersAsked, IReadOnlyList<Coordinate> Unanswered);

// Listing: every reachable server reports the manifests it holds; the union is the cluster's datasets.
public sealed partial class ChunkStoreService
{
    private readonly Dictionary<ulong, ListOperation> _lists = [];

    /// <summary>Asks every reachable server which dataset manifests it stores; <paramref name="done"/> gets the union by name.</summary>
    public void ListManifests(Action<ListResult> done)
    {
        ArgumentNullException.ThrowIfNull(done);
        var context = Context;
        var servers = context.Torus.All().Where(c => c != context.Self && IsReachable(c)).ToList();
        var list = new ListOperation(this, NewId(), servers, done);
        _lists[list.Id] = list;
        list.Start();
    }

    private void OnListRequest(Coordinate peer, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadListRequest(payload, out int skip))
        {
            Counters.Malformed++;
            return;
        }
        var manifests = Local.Manifests();
        int length = ChunkWire.WriteListReply(_frame, id, manifests, Math.Min(skip, manifests.Count), out _);
        SendControl(peer, length);
    }

    private void OnListReply(int peerIndex, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadListReply(payload, out bool more, out var manifests))
        {
            Counters.Malformed++;
            return;
        }
        if (_lists.TryGetValue(id, out var list))
        {
            list.OnReply(peerIndex, more, manifests!);
        }
    }

    private sealed class ListOperation(ChunkStoreService service, ulong id, List<Coordinate> servers, Action<ListResult> done)
        : EveryServerOperation<int>(service, id, servers, "listing")
    {
        private readonly SortedDictionary<string, ChunkMeta> _found = new(StringComparer.Ordinal);

        public void Start()
        {
            Add(Service.Local.Manifests());
            AskAll();
            LocalDone();
        }

        public void OnReply(int peerIndex, bool more, List<ChunkMeta> manifests)
        {
            if (!TryAwaiting(peerIndex, out var peer))
            {
                return;
            }
            Add(manifests);
            peer.Cursor += manifests.Count;
            Received(peer, more && manifests.Count > 0);
        }

        protected override void Send(Peer peer) =>
            Service.SendControl(peer.Server, ChunkWire.WriteListRequest(Service._frame, Id, peer.Cursor));

        protected override void Forget() => Service._lists.Remove(Id);

        protected override void Complete(List<Coordinate> answered, List<Coordinate> unanswered) =>
            done(new ListResult([.. _found.Values], ServersAsked, unanswered));

        private void Add(IEnumerable<ChunkMeta> manifests)
        {
            foreach (var m in manifests)
            {
                _found.TryAdd(m.Dataset, m);
            }
        }
    }
}
