using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

public sealed partial class ChunkStoreService
{
    /// <summary>
    /// One question put to other servers (a listing, a delete, fsck's replica listing): each reachable one is asked, and
    /// asked again every <see cref="ChunkStoreOptions.ListTimeout"/> it stays silent, at most
    /// <see cref="ChunkStoreOptions.ListAttempts"/> times (one that becomes unreachable is not waited for). An answer may
    /// come in pages, each page asking for the next from where <see cref="Peer.Cursor"/> stands. Once this server's own
    /// part and every peer are done, the operation completes, naming the servers that did not answer.
    /// </summary>
    private abstract class EveryServerOperation<TCursor>
    {
        private readonly Dictionary<int, Peer> _peers = [];
        private readonly string _what;
        private bool _localDone;
        private bool _finished;

        protected EveryServerOperation(ChunkStoreService service, ulong id, IEnumerable<Coordinate> servers, string what)
        {
            Service = service;
            Id = id;
            _what = what;
            foreach (var s in servers)
            {
                _peers[service.Context.Torus.IndexOf(s)] = new Peer(s);
            }
        }

        public ulong Id { get; }

        protected ChunkStoreService Service { get; }

        /// <summary>The servers asked, this one included.</summary>
        protected int ServersAsked => _peers.Count + 1;

        /// <summary>Ends the operation now (also when the server stops): those that have not answered are named.</summary>
        public void Finish()
        {
            if (_finished)
            {
                return;
            }
            _finished = true;
            Forget();
            var answered = _peers.Values.Where(p => p.Answered).Select(p => p.Server).Prepend(Service.Context.Self).ToList();
            var unanswered = _peers.Values.Where(p => !p.Answered).Select(p => p.Server).ToList();
            if (unanswered.Count > 0)
            {
                Service.Context.Log(LogLevel.Warning, $"chunk store: {_what} without answers from {string.Join(' ', unanswered.Select(c => c.Name))}");
            }
            Complete(answered, unanswered);
        }

        /// <summary>Asks every peer (an unreachable one cannot answer: it is given up at once) and starts the retries.</summary>
        protected void AskAll()
        {
            foreach (var peer in _peers.Values)
            {
                if (Service.IsReachable(peer.Server))
                {
                    Send(peer);
                }
                else
                {
                    peer.GaveUp = true;
                }
            }
            Check();
            if (!_finished)
            {
                Service.Context.SetTimer(Service.Options.ListTimeout, OnTimer);
            }
        }

        /// <summary>This server's own part is done.</summary>
        protected void LocalDone()
        {
            _localDone = true;
            Check();
        }

        /// <summary>The peer that sent an answer, while its answer is still awaited.</summary>
        protected bool TryAwaiting(int peerIndex, out Peer peer) =>
            _peers.TryGetValue(peerIndex, out peer!) && !_finished && !peer.Answered && !peer.GaveUp;

        /// <summary>A page of <paramref name="peer"/>'s answer arrived: ask for the next one, or it has answered.</summary>
        protected void Received(Peer peer, bool more)
        {
            peer.Attempts = 0;
            if (more)
            {
                Send(peer);
                return;
            }
            peer.Answered = true;
            Check();
        }

        protected abstract void Send(Peer peer);

        /// <summary>Removes the operation from the service's table of those running.</summary>
        protected abstract void Forget();

        protected abstract void Complete(List<Coordinate> answered, List<Coordinate> unanswered);

        private void OnTimer()
        {
            if (_finished)
            {
                return;
            }
            foreach (var peer in _peers.Values.Where(p => !p.Answered && !p.GaveUp))
            {
                if (++peer.Attempts >= Service.Options.ListAttempts || !Service.IsReachable(peer.Server))
                {
                    peer.GaveUp = true;
                }
                else
                {
                    Send(peer);
                }
            }
            Check();
            if (!_finished)
            {
                Service.Context.SetTimer(Service.Options.ListTimeout, OnTimer);
            }
        }

        private void Check()
        {
            if (_localDone && !_finished && _peers.Values.All(p => p.Answered || p.GaveUp))
            {
                Finish();
            }
        }

        protected sealed class Peer(Coordinate server)
        {
            public Coordinate Server { get; } = server;

            /// <summary>Where the next page of its answer starts.</summary>
            public TCursor? Cursor { get; set; }

            public int Attempts { get; set; }

            public bool Answered { get; set; }

            public bool GaveUp { get; set; }
        }
    }
}
