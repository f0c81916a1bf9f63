using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>
/// Where the replicas of a chunk live (the Camdoop paper, §4): the primary at the owner of the chunk id; the two others at the
/// servers that would own the id if the primary, then the primary and the first replica, were unreachable. The key
/// mapper remaps a dead server's keys to one of its one-hop neighbours first, so while the primary lives both
/// replicas are distinct one-hop neighbours of it (reached over different links), and when the primary dies the
/// new owner of the chunk id (where its map task will run, §4.2) already holds a replica.
/// </summary>
public static class ChunkPlacement
{
    public const int Replicas = 3;

    /// <summary>The replica servers of <paramref name="chunk"/> among those reachable in <paramref name="reachable"/>, primary first.</summary>
    public static IReadOnlyList<Coordinate> Targets(KeyMapper mapper, in Key chunk, ServerSet reachable, int replicas = Replicas)
    {
        ArgumentNullException.ThrowIfNull(mapper);
        ArgumentNullException.ThrowIfNull(reachable);
        var view = reachable.Clone();
        var targets = new List<Coordinate>(replicas);
        while (targets.Count < replicas && view.Count > 0)
        {
            int owner = mapper.OwnerIndex(chunk, view);
            if (owner < 0)
            {
                break;
            }
            targets.Add(mapper.Torus.CoordinateOf(owner));
            view.Remove(owner);
        }
        return targets;
    }

    /// <summary>The replica servers as this server's routing view sees them.</summary>
    public static IReadOnlyList<Coordinate> Targets(KeyRoutingService routing, in Key chunk, int replicas = Replicas)
    {
        ArgumentNullException.ThrowIfNull(routing);
        var torus = routing.Mapper.Torus;
        var reachable = new ServerSet(torus.Count);
        for (int i = 0; i < torus.Count; i++)
        {
            if (routing.IsReachable(torus.CoordinateOf(i)))
            {
                reachable.Add(i);
            }
        }
        return Targets(routing.Mapper, chunk, reachable, replicas);
    }

    /// <summary>
    /// The id of chunk <paramref name="index"/> of a dataset: its top bits place chunk i on server (start + i) mod N, so
    /// every server is the primary of an equal share (one chunk each when there are N chunks); the rest is a hash of
    /// the dataset name, the index and the upload's nonce, so ids are unique and spread like SHA-1 outputs.
    /// </summary>
    public static Key ChunkId(Torus torus, string dataset, int index, ulong nonce)
    {
        ArgumentNullException.ThrowIfNull(torus);
        int start = (int)(nonce % (ulong)torus.Count);
        var server = torus.CoordinateOf((int)(((long)start + index) % torus.Count));
        var suffix = Key.FromString(FormattableString.Invariant($"camdoop/chunk/{dataset}/{index}/{nonce:x16}"));
        return Key.FromCoordinate(torus, server, suffix);
    }

    /// <summary>The id under which a dataset's manifest is stored.</summary>
    public static Key ManifestId(string dataset) => Key.FromString("camdoop/dataset/" + dataset);
}
