
namespace Camdoop.FrontEnd.Web;

/// <summary>The cube's chunk stores on the page: totals over the servers that answered the storage query.</summary>
public sealed record StorageTotals
{
    public static readonly StorageTotals None = new();

    /// <summary>Servers that answered the latest round (0 before the first one).</summary>
    public int Servers { get; init; }

    /// <summary>Replicas held, every copy counted (a chunk stored three times is three).</summary>
    public long Replicas { get; init; }

    public long BytesStored { get; init; }

    /// <summary>Replica copies queued or running to restore replicas or move them where they belong.</summary>
    public long CopiesPending { get; init; }

    public long BytesCopied { get; init; }

    /// <summary>Servers taken for lost (unreachable past the grace period): the most any server takes.</summary>
    public long ServersLost { get; init; }

    /// <summary>Replicas the scrubbers found corrupt or missing, and of those the ones repaired.</summary>
    public long CorruptFound { get; init; }

    public long Repaired { get; init; }

    /// <summary>
    /// The totals from <see cref="CubeState.StorageQuery"/>'s latest round (replicas, bytes_stored, copies_pending,
    /// bytes_copied, servers_lost, corrupt_found, repaired), all 0 while there is none.
    /// </summary>
    public static StorageTotals From(RoundPair storage)
    {
        ArgumentNullException.ThrowIfNull(storage);
        if (storage.Latest is not { } round)
        {
            return None;
        }
        // No server with a chunk store answered: the aggregate has no row, and every total is 0.
        var row = round.Rows.Count > 0 ? round.Rows[0] : null;
        long At(int i) => row is null ? 0 : (long)row[i].Number;
        return new StorageTotals
        {
            Servers = round.Servers,
            Replicas = At(0),
            BytesStored = At(1),
            CopiesPending = At(2),
            BytesCopied = At(3),
            ServersLost = At(4),
            CorruptFound = At(5),
            Repaired = At(6),
        };
    }
}
