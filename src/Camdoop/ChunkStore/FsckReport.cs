using Camdoop.KeyRouting;
using Camdoop.Runtime.Topology;

namespace Camdoop.ChunkStore;

/// <summary>
/// A chunk fsck found short of good replicas: where its live replicas are and in what state, and where placement puts
/// its replicas. <see cref="Index"/> is the chunk's place in its dataset, -1 for the dataset's manifest.
/// </summary>
public sealed record FsckChunk(Key Id, int Index, IReadOnlyList<HeldReplica> Replicas, IReadOnlyList<Coordinate> Placement)
{
    /// <summary>Live replicas not known to be corrupt (checked good, or not checked since their server started).</summary>
    public int Good => Replicas.Count(r => r.State is ReplicaState.Good or ReplicaState.Unchecked);

    public bool IsManifest => Index < 0;
}

/// <summary>
/// One dataset's health. <see cref="Chunks"/> counts its data chunks; <see cref="Replicas"/> their replicas on the
/// servers that answered, corrupt ones included (not those whose file is gone, <see cref="ReplicaState.Missing"/>); <see cref="UnderReplicated"/> the chunks with fewer good live
/// replicas than <see cref="FsckReport.Required"/>, <see cref="Missing"/> (a subset) those with none, and
/// <see cref="Corrupt"/> the live replicas whose last check found them bad. The manifest is not among the chunks: its
/// good live replicas are <see cref="ManifestReplicas"/>, and it is listed in <see cref="Problems"/> when short.
/// <see cref="Error"/>: the manifest could not be read, so the dataset's chunks are unknown.
/// </summary>
public sealed record FsckDataset(
    string Name,
    int Chunks,
    int Replicas,
    int UnderReplicated,
    int Missing,
    int Corrupt,
    int ManifestReplicas,
    IReadOnlyList<FsckChunk> Problems,
    string? Error = null)
{
    /// <summary>Whether some of the dataset's bytes are gone: a chunk without a good replica, or no readable manifest.</summary>
    public bool Lost => Missing > 0 || Error is not null;
}

/// <summary>
/// What `camdoop fsck` reports: each dataset's chunks set against the replicas the servers hold and the placement.
/// Built by <see cref="Build"/> from a replica listing, the manifests and the placement view.
/// </summary>
public sealed record FsckReport(IReadOnlyList<FsckDataset> Datasets, IReadOnlyList<Coordinate> Answered, IReadOnlyList<Coordinate> Unanswered)
{
    /// <summary>Good replicas a chunk should have: three, or as many as there are live servers when fewer.</summary>
    public int Required => Math.Min(ChunkPlacement.Replicas, Answered.Count);

    public int Chunks => Datasets.Sum(d => d.Chunks);

    public int Replicas => Datasets.Sum(d => d.Replicas);

    public int UnderReplicated => Datasets.Sum(d => d.UnderReplicated);

    public int Missing => Datasets.Sum(d => d.Missing);

    public int Corrupt => Datasets.Sum(d => d.Corrupt);

    public bool Lost => Datasets.Any(d => d.Lost);

    /// <summary>A dataset whose manifest was read: <see cref="Manifest"/>; else the reason in <see cref="Error"/>.</summary>
    public sealed record Input(string Name, DatasetManifest? Manifest, string? Error);

    /// <summary>
    /// Sets each dataset's chunks against <paramref name="replicas"/>; only replicas on <paramref name="replicas"/>'s
    /// answered servers count (a server that did not answer may be down). <paramref name="placement"/> gives where a
    /// chunk's replicas belong.
    /// </summary>
    public static FsckReport Build(IEnumerable<Input> datasets, ReplicaListResult replicas, Func<Key, IReadOnlyList<Coordinate>> placement)
    {
        ArgumentNullException.ThrowIfNull(datasets);
        ArgumentNullException.ThrowIfNull(replicas);
        ArgumentNullException.ThrowIfNull(placement);
        var live = replicas.Answered.ToHashSet();
        int required = Math.Min(ChunkPlacement.Replicas, live.Count);
        List<HeldReplica> LiveReplicas(Key id) =>
            replicas.Replicas.TryGetValue(id, out var held) ? held.Where(r => live.Contains(r.Server)).OrderBy(r => r.Server.Name, StringComparer.Ordinal).ToList() : [];

        var result = new List<FsckDataset>();
        foreach (var input in datasets.OrderBy(d => d.Name, StringComparer.Ordinal))
        {
            var manifestId = ChunkPlacement.ManifestId(input.Name);
            var manifestChunk = new FsckChunk(manifestId, -1, LiveReplicas(manifestId), placement(manifestId));
            var problems = new List<FsckChunk>();
            if (manifestChunk.Good < required)
            {
                problems.Add(manifestChunk);
            }
            if (input.Manifest is not { } manifest)
            {
                result.Add(new FsckDataset(input.Name, 0, 0, 0, 0, 0, manifestChunk.Good, problems, input.Error ?? "the manifest could not be read"));
                continue;
            }
            int count = 0, under = 0, missing = 0, corrupt = 0;
            for (int i = 0; i < manifest.Chunks.Count; i++)
            {
                var id = manifest.Chunks[i].Id;
                var held = LiveReplicas(id);
                count += held.Count(r => r.State != ReplicaState.Missing);
                corrupt += held.Count(r => r.State == ReplicaState.Corrupt);
                int good = held.Count(r => r.State is ReplicaState.Good or ReplicaState.Unchecked);
                if (good < required)
                {
                    under++;
                    missing += good == 0 ? 1 : 0;
                }
                // Enough good replicas and a corrupt or lost one besides is still worth naming. Placement is looked up
                // for these alone: it costs a pass over the servers.
                if (good < held.Count || good < required)
                {
                    problems.Add(new FsckChunk(id, i, held, placement(id)));
                }
            }
            result.Add(new FsckDataset(input.Name, manifest.Chunks.Count, count, under, missing, corrupt, manifestChunk.Good, problems));
        }
        return new FsckReport(result, replicas.Answered, replicas.Unanswered);
    }
}
