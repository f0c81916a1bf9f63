using Camdoop.Records;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>How a write went: the servers now holding a replica (primary first), or why it failed.</summary>
public sealed record WriteResult(bool Ok, IReadOnlyList<Coordinate> Replicas, string? Error)
{
    public static WriteResult Failed(string error) => new(false, [], error);
}

// Writes: one transfer per replica target; done when every live target has the replica.
public sealed partial class ChunkStoreService
{
    /// <summary>
    /// Stores <paramref name="bytes"/> as chunk <paramref name="meta"/> at its replica servers (this server's view).
    /// <paramref name="done"/> runs on the event loop once every live target has checked the bytes and has them on
    /// stable storage (flushed, renamed into place, directory flushed), or
    /// when one that is still reachable could not. A target that became unreachable meanwhile is no longer a live
    /// replica and does not fail the write, but at least one replica must be stored. The caller must not modify
    /// <paramref name="bytes"/> until then.
    /// </summary>
    public void Write(ChunkMeta meta, ReadOnlyMemory<byte> bytes, Action<WriteResult> done)
    {
        ArgumentNullException.ThrowIfNull(meta);
        ArgumentNullException.ThrowIfNull(done);
        if (meta.Length != bytes.Length || XxHash64.Hash(bytes.Span) != meta.Checksum)
        {
            done(WriteResult.Failed($"chunk {meta.Id}: the bytes do not match the metadata's length and checksum"));
            return;
        }
        var targets = PlacementOf(meta.Id);
        if (targets.Count == 0)
        {
            done(WriteResult.Failed($"chunk {meta.Id}: no replica server is reachable"));
            return;
        }
        var write = new WriteOperation(this, meta, targets, done);
        foreach (var target in targets)
        {
            if (target == Context.Self)
            {
                StoreLocal(meta, bytes, error => write.OnResult(target, error is null ? TransferOutcome.Success() : TransferOutcome.Failure(error)));
            }
            else
            {
                StartOutbound(target, TransferPurpose.Store, meta, new MemoryChunkSource(bytes), outcome => write.OnResult(target, outcome));
            }
        }
    }

    private sealed class WriteOperation(ChunkStoreService service, ChunkMeta meta, IReadOnlyList<Coordinate> targets, Action<WriteResult> done)
    {
        private readonly List<Coordinate> _stored = [];
        private readonly List<string> _errors = [];
        private int _pending = targets.Count;

        public void OnResult(Coordinate target, TransferOutcome outcome)
        {
            if (outcome.Ok)
            {
                _stored.Add(target);
            }
            else if (service.IsReachable(target))
            {
                _errors.Add(outcome.Error ?? $"replica on {target.Name} failed");
            }
            if (--_pending > 0)
            {
                return;
            }
            if (_errors.Count > 0)
            {
                done(WriteResult.Failed($"chunk {meta.Index} of {meta.Dataset}: {string.Join("; ", _errors)}"));
            }
            else if (_stored.Count == 0)
            {
                done(WriteResult.Failed($"chunk {meta.Index} of {meta.Dataset}: no replica server is reachable"));
            }
            else
            {
                // Primary first, as placed.
                done(new WriteResult(true, [.. targets.Where(_stored.Contains)], null));
            }
        }
    }
}
