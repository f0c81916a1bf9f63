using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>What deleting a dataset did: replicas and bytes deleted over every server that answered, and those that did not.</summary>
public sealed record DeleteResult(int Deleted, long Bytes, int ServersAsked, IReadOnlyList<Coordinate> Unanswered);

// Deleting a dataset: every reachable server drops the replicas it holds of it (manifest and data chunks), wherever
// placement or repairs put them, and answers once their files are gone. Asked like a listing, with the same retries.
public sealed partial class ChunkStoreService
{
    private readonly Dictionary<ulong, DeleteOperation> _deletes = [];

    // What this server answered each recent delete request, so a repeated request (its reply was lost) gets the same
    // count and not 0. Bounded: cleared when it grows past a few thousand.
    private readonly Dictionary<(int Peer, ulong Id), (int Replicas, long Bytes)> _deleteAnswers = [];
    private readonly HashSet<(int Peer, ulong Id)> _deletesInProgress = [];

    /// <summary>Deletes every replica of <paramref name="dataset"/> on every reachable server; <paramref name="done"/> gets the totals.</summary>
    public void DeleteDataset(string dataset, Action<DeleteResult> done)
    {
        ArgumentNullException.ThrowIfNull(dataset);
        ArgumentNullException.ThrowIfNull(done);
        // The manifest first: it names the replicas a tombstone must cover if some server is away.
        Read(ChunkPlacement.ManifestId(dataset), read =>
        {
            DatasetManifest? manifest = null;
            if (read.Ok)
            {
                try
                {
                    manifest = DatasetManifest.Decode(read.Bytes);
                }
                catch (InvalidDataException)
                {
                    // Removed all the same; with no list of its chunks, no tombstone can name them.
                }
            }
            var context = Context;
            var servers = context.Torus.All().Where(c => c != context.Self && IsReachable(c)).ToList();
            var delete = new DeleteOperation(this, NewId(), dataset, servers, result =>
            {
                if (manifest is not null)
                {
                    KeepTombstone(manifest, read.Meta!.Checksum, servers.Except(result.Unanswered));
                }
                done(result);
            });
            _deletes[delete.Id] = delete;
            DeleteLocal(dataset, (replicas, bytes) => delete.OnLocal(replicas, bytes));
        });
    }

    /// <summary>Drops this server's replicas of <paramref name="dataset"/> now; deletes their files off the loop, then calls back.</summary>
    private void DeleteLocal(string dataset, Action<int, long> done)
    {
        var removed = Local.RemoveDataset(dataset);
        AbandonSending(meta => meta.Dataset == dataset, $"dataset '{dataset}' was removed");
        if (removed.Count == 0)
        {
            done(0, 0);
            return;
        }
        string? error = null;
        Context.RunOffLoop(
            () =>
            {
                foreach (var chunk in removed)
                {
                    try
                    {
                        LocalChunkStore.DeleteFiles(chunk);
                    }
                    catch (IOException e)
                    {
                        error ??= e.Message;
                    }
                }
            },
            () =>
            {
                if (error is not null)
                {
                    Counters.StorageErrors++;
                    Context.Log(LogLevel.Warning, $"chunk store: deleting dataset '{dataset}': {error}");
                }
                Context.Log(LogLevel.Info, $"chunk store: deleted {removed.Count} replicas of dataset '{dataset}'");
                done(removed.Count, removed.Sum(c => c.Meta.Length));
            });
    }

    /// <summary>
    /// Stops the copies of replicas just removed here: a copy keeps its file open, so one still offering to a server
    /// that is away would bring the replica back when that server returns.
    /// </summary>
    private void AbandonSending(Func<ChunkMeta, bool> removed, string why)
    {
        foreach (var transfer in _outbound.Values.Where(t => t.Purpose != TransferPurpose.ReadResponse && removed(t.Meta)).ToList())
        {
            transfer.Abandon(why);
        }
    }

    private void OnDeleteRequest(Coordinate peer, int peerIndex, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadDeleteRequest(payload, out string? dataset))
        {
            Counters.Malformed++;
            return;
        }
        if (_deleteAnswers.TryGetValue((peerIndex, id), out var answered))
        {
            SendControl(peer, ChunkWire.WriteDeleteReply(_frame, id, answered.Replicas, answered.Bytes));
            return;
        }
        // Still deleting for the first request: the answer comes when the files are gone.
        if (!_deletesInProgress.Add((peerIndex, id)))
        {
            return;
        }
        if (_deleteAnswers.Count > 4096)
        {
            _deleteAnswers.Clear();
        }
        DeleteLocal(dataset!, (replicas, bytes) =>
        {
            _deletesInProgress.Remove((peerIndex, id));
            _deleteAnswers[(peerIndex, id)] = (replicas, bytes);
            SendControl(peer, ChunkWire.WriteDeleteReply(_frame, id, replicas, bytes));
        });
    }

    private void OnDeleteReply(int peerIndex, ulong id, ReadOnlySpan<byte> payload)
    {
        if (!ChunkWire.TryReadDeleteReply(payload, out int replicas, out long bytes))
        {
            Counters.Malformed++;
            return;
        }
        if (_deletes.TryGetValue(id, out var delete))
        {
            delete.OnReply(peerIndex, replicas, bytes);
        }
    }

    /// <summary>A delete: every peer is asked once this server's replicas are gone, so that its own count comes first.</summary>
    private sealed class DeleteOperation(ChunkStoreService service, ulong id, string dataset, List<Coordinate> servers, Action<DeleteResult> done)
        : EveryServerOperation<int>(service, id, servers, $"deleting '{dataset}'")
    {
        private bool _started;
        private int _deleted;
        private long _bytes;

        /// <summary>The local replicas are gone: ask every other server.</summary>
        public void OnLocal(int replicas, long bytes)
        {
            _deleted += replicas;
            _bytes += bytes;
            if (_started)
            {
                return;
            }
            _started = true;
            AskAll();
            LocalDone();
        }

        public void OnReply(int peerIndex, int replicas, long bytes)
        {
            if (!TryAwaiting(peerIndex, out var peer))
            {
                return;
            }
            _deleted += replicas;
            _bytes += bytes;
            Received(peer, more: false);
        }

        protected override void Send(Peer peer) =>
            Service.SendControl(peer.Server, ChunkWire.WriteDeleteRequest(Service._frame, Id, dataset));

        protected override void Forget() => Service._deletes.Remove(Id);

        protected override void Complete(List<Coordinate> answered, List<Coordinate> unanswered) =>
            done(new DeleteResult(_deleted, _bytes, ServersAsked, unanswered));
    }
}
