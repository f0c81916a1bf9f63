namespace Camdoop.Experiments;

/// <summary>
/// Where a simulation keeps its files when its options name no data root: the servers' chunk files, their data
/// directories (job directories, reduce outputs) and map runs. A memory file system (/dev/shm) when there is one with
/// room for the run and its map outputs stay in memory anyway, else the temp directory. The files are the same
/// either way; on a disk file system creating and deleting the thousands of small files and directories of a
/// 512-server run costs seconds of kernel time (ext4 allocates each inode by searching its bitmaps), on tmpfs next to
/// none.
/// </summary>
public static class SimulationScratch
{
    private const string MemoryFileSystem = "/dev/shm";

    /// <summary>The data root of the run of <paramref name="options"/>.</summary>
    public static string RootFor(JobSimulationOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        if (options.DataRoot is { } root)
        {
            return root;
        }
        // Its input, its output (up to the input again) and room to spare.
        return !options.MapOutputOnDisk && HasRoom(3 * InputBytes(options)) ? MemoryFileSystem : Path.GetTempPath();
    }

    private static bool HasRoom(long bytes)
    {
        try
        {
            return Directory.Exists(MemoryFileSystem)
                && new DriveInfo(MemoryFileSystem).AvailableFreeSpace >= bytes
                && bytes <= GC.GetGCMemoryInfo().TotalAvailableMemoryBytes / 4;
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException or ArgumentException)
        {
            return false;
        }
    }

    private static long InputBytes(JobSimulationOptions options)
    {
        if (options.InputPath is not { } path)
        {
            return options.BytesPerServer * options.Torus.Count;
        }
        if (File.Exists(path))
        {
            return new FileInfo(path).Length;
        }
        return Directory.Exists(path) ? new DirectoryInfo(path).EnumerateFiles().Sum(f => f.Length) : 0;
    }
}
