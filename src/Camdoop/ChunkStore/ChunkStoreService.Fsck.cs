namespace Camdoop.ChunkStore;

/// <summary>What fsck found, or why it could not run (an unknown dataset).</summary>
public sealed record FsckResult(FsckReport? Report, string? Error);

// fsck: which replicas every server holds (the replica listing), which chunks each dataset has (its manifest, read
// like any chunk) and where they belong (placement in this server's view), set side by side (FsckReport).
public sealed partial class ChunkStoreService
{
    /// <summary>
    /// Checks <paramref name="dataset"/>, or every dataset when null, against the replicas the servers hold.
    /// <paramref name="done"/> runs on the loop with the report, or with an error when the named dataset does not exist.
    /// </summary>
    public void Fsck(string? dataset, Action<FsckResult> done)
    {
        ArgumentNullException.ThrowIfNull(done);
        ListReplicas(dataset, replicas =>
        {
            if (dataset is not null)
            {
                ReadManifests([dataset], named: true, replicas, done);
                return;
            }
            ListManifests(list => ReadManifests([.. list.Manifests.Select(m => m.Dataset)], named: false, replicas, done));
        });
    }

    private void ReadManifests(List<string> names, bool named, ReplicaListResult replicas, Action<FsckResult> done)
    {
        var inputs = new FsckReport.Input?[names.Count];
        int left = names.Count;
        if (left == 0)
        {
            done(new FsckResult(FsckReport.Build([], replicas, chunk => PlacementOf(chunk)), null));
            return;
        }
        for (int i = 0; i < names.Count; i++)
        {
            int index = i;
            string name = names[i];
            Read(ChunkPlacement.ManifestId(name), result =>
            {
                inputs[index] = Decode(name, result);
                if (--left > 0)
                {
                    return;
                }
                // A named dataset of which no server holds anything does not exist; one whose chunks remain lost its manifest.
                if (named && result.NotFound && replicas.Replicas.Count == 0)
                {
                    done(new FsckResult(null, $"unknown dataset '{name}'"));
                    return;
                }
                done(new FsckResult(FsckReport.Build(inputs!, replicas, chunk => PlacementOf(chunk)), null));
            });
        }
    }

    private static FsckReport.Input Decode(string name, ReadResult result)
    {
        if (!result.Ok)
        {
            return new FsckReport.Input(name, null, result.Error ?? "the manifest could not be read");
        }
        try
        {
            return new FsckReport.Input(name, DatasetManifest.Decode(result.Bytes), null);
        }
        catch (InvalidDataException e)
        {
            return new FsckReport.Input(name, null, $"the manifest is damaged: {e.Message}");
        }
    }
}
