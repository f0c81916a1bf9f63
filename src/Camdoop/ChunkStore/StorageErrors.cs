namespace Camdoop.ChunkStore;

/// <summary>How the chunk store tells a full disk from other storage errors, to say so to the client.</summary>
public static class StorageErrors
{
    /// <summary>Whether the error is a full disk or an exceeded quota (.NET puts errno in HResult on Unix).</summary>
    public static bool IsDiskFull(IOException error) =>
        error is not null && error.HResult is NativeFiles.ENoSpc or NativeFiles.EDQuot;
}
