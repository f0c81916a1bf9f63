using Camdoop.Runtime.Logging;
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

    private sealed class ListOperation
    {
        private readonly ChunkStoreService _service;
        private readonly Action<ListResult> _done;
        private readonly Dictionary<int, PeerState> _peers = [];
        private readonly SortedDictionary<string, ChunkMeta> _found = new(StringComparer.Ordinal);
        private bool _finished;

        public ListOperation(ChunkStoreService service, ulong id, List<Coordinate> servers, Action<ListResult> done)
        {
            _service = service;
            Id = id;
            _done = done;
            foreach (var s in servers)
            {
                _peers[service.Context.Torus.IndexOf(s)] = new PeerState(s);
            }
            ServersAsked = servers.Count + 1;
        }

        public ulong Id { get; }

        private int ServersAsked { get; }

        public void Start()
        {
            Add(_service.Local.Manifests());
            foreach (var peer in _peers.Values)
            {
                Send(peer);
            }
            Check();
            if (!_finished)
            {
                _service.Context.SetTimer(_service.Options.ListTimeout, OnTimer);
            }
        }

        public void OnReply(int peerIndex, bool more, List<ChunkMeta> manifests)
        {
            if (_finished || !_peers.TryGetValue(peerIndex, out var peer) || peer.Done)
            {
                return;
            }
            Add(manifests);
            peer.Skip += manifests.Count;
            peer.Attempts = 0;
            if (more && manifests.Count > 0)
            {
                Send(peer);
            }
            else
            {
                peer.Done = true;
                Check();
            }
        }

        public void Finish()
        {
            if (_finished)
            {
                return;
            }
            _finished = true;
            _service._lists.Remove(Id);
            var unanswered = _peers.Values.Where(p => !p.Done).Select(p => p.Server).ToList();
            if (unanswered.Count > 0)
            {
                _service.Context.Log(LogLevel.Warning, $"chunk store: listing without answers from {string.Join(' ', unanswered.Select(c => c.Name))}");
            }
            _done(new ListResult([.. _found.Values], ServersAsked, unanswered));
        }

        private void OnTimer()
        {
            if (_finished)
            {
                return;
            }
            foreach (var peer in _peers.Values)
            {
                if (!peer.Done)
                {
                    if (++peer.Attempts >= _service.Options.ListAttempts || !_service.IsReachable(peer.Server))
                    {
                        peer.Done = true;
                        peer.GaveUp = true;
                    }
                    else
                    {
                        Send(peer);
                    }
                }
            }
            Check();
            if (!_finished)
            {
                _service.Context.SetTimer(_service.Options.ListTimeout, OnTimer);
            }
        }

        private void Check()
        {
            if (_peers.Values.All(p => p.Done))
            {
                foreach (var p in _peers.Values)
                {
                    p.Done = !p.GaveUp;
                }
                Finish();
            }
        }

        private void Send(PeerState peer) =>
            _service.SendControl(peer.Server, ChunkWire.WriteListRequest(_service._frame, Id, peer.Skip));

        private void Add(IEnumerable<ChunkMeta> manifests)
        {
            foreach (var m in manifests)
            {
                _found.TryAdd(m.Dataset, m);
            }
        }

        private sealed class PeerState(Coordinate server)
        {
            public Coordinate Server { get; } = server;

            public int Skip { get; set; }

            public int Attempts { get; set; }

            public bool Done { get; set; }

            public bool GaveUp { get; set; }
        }
    }
}
