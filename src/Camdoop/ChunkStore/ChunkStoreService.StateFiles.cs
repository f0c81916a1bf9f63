using Camdoop.KeyRouting;
using Camdoop.Runtime.Logging;

namespace Camdoop.ChunkStore;

// Small state files the store keeps beside its replicas (tombstones, the decommissioned servers): replaced whole, off
// the loop, one write after another per file (the write queue orders work by key), so an older state never lands last.
public sealed partial class ChunkStoreService
{
    /// <summary>Replaces <paramref name="path"/> with <paramref name="bytes"/> (null: deletes it); <paramref name="what"/> names it in a warning.</summary>
    private void SaveStateFile(string path, byte[]? bytes, string what)
    {
        string? error = null;
        _writes!.Run(
            Key.FromString("camdoop/state/" + path),
            () =>
            {
                try
                {
                    if (bytes is null)
                    {
                        File.Delete(path);
                        return;
                    }
                    Directory.CreateDirectory(Path.GetDirectoryName(path)!);
                    File.WriteAllBytes(path + ".tmp", bytes);
                    File.Move(path + ".tmp", path, overwrite: true);
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    error = e.Message;
                }
            },
            () =>
            {
                if (error is not null)
                {
                    Counters.StorageErrors++;
                    Context.Log(LogLevel.Warning, $"chunk store: keeping {what}: {error}");
                }
            });
    }
}
