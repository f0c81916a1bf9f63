using System.Diagnostics;
using System.Globalization;
using System.Runtime.InteropServices;
using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.Records;

namespace Camdoop.Benchmarks.ChunkStore;

/// <summary>
/// What the scrubber's check costs: replica files of one chunk size are written to a temporary directory, then checked
/// as the scrubber checks them (<see cref="LocalChunkStore.CheckFile"/>, one after another, one buffer), a few rounds
/// with the files in the page cache and a few with them evicted first (POSIX_FADV_DONTNEED, so the bytes come from the
/// disk). Prints CSV: the process's CPU seconds per GB checked, and GB checked per wall-clock second.
/// Usage: <c>scrub-cost [GB, default 2] [chunk MB, default 64] [directory, default the temp directory]</c>.
/// </summary>
public static class ScrubCostBenchmark
{
    private const int Rounds = 3;

    public static int Run(string[] args, TextWriter output)
    {
        double gb = args.Length > 0 ? double.Parse(args[0], CultureInfo.InvariantCulture) : 2;
        int chunkMb = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 64;
        string root = Path.Combine(args.Length > 2 ? args[2] : Path.GetTempPath(), $"camdoop-scrub-cost-{Environment.ProcessId}");
        var bytes = new byte[chunkMb * 1_000_000];
        new Random(1).NextBytes(bytes);
        int files = Math.Max(1, (int)Math.Round(gb * 1000 / chunkMb));
        var meta = new ChunkMeta { Id = Key.FromString("scrub-cost"), Length = bytes.Length, Checksum = XxHash64.Hash(bytes), Dataset = "scrub-cost", Count = 1 };
        Directory.CreateDirectory(root);
        try
        {
            var paths = Enumerable.Range(0, files).Select(i => Path.Combine(root, string.Create(CultureInfo.InvariantCulture, $"{i}.data"))).ToList();
            foreach (var path in paths)
            {
                File.WriteAllBytes(path, bytes);
            }
            var buffer = new byte[LocalChunkStore.CheckBufferBytes];
            output.WriteLine("pages,round,gb,wall_s,cpu_s,cpu_s_per_gb,gb_per_wall_s");
            foreach (bool evict in new[] { false, true })
            {
                for (int round = 0; round < Rounds; round++)
                {
                    if (evict)
                    {
                        paths.ForEach(Evict);
                    }
                    var process = Process.GetCurrentProcess();
                    var cpu = process.TotalProcessorTime;
                    var wall = Stopwatch.StartNew();
                    foreach (var path in paths)
                    {
                        if (LocalChunkStore.CheckFile(path, meta, buffer) != ReplicaHealth.Good)
                        {
                            throw new InvalidOperationException($"{path} did not check good");
                        }
                    }
                    double wallS = wall.Elapsed.TotalSeconds;
                    process.Refresh();
                    double cpuS = (process.TotalProcessorTime - cpu).TotalSeconds;
                    double checkedGb = (double)files * bytes.Length / 1e9;
                    output.WriteLine(string.Create(CultureInfo.InvariantCulture,
                        $"{(evict ? "evicted" : "cached")},{round},{checkedGb:0.###},{wallS:0.###},{cpuS:0.###},{cpuS / checkedGb:0.###},{checkedGb / wallS:0.###}"));
                }
            }
        }
        finally
        {
            Directory.Delete(root, recursive: true);
        }
        return 0;
    }

    /// <summary>Drops the file's pages from the page cache, so the next read comes from the disk.</summary>
    private static void Evict(string path)
    {
        using var handle = File.OpenHandle(path, FileMode.Open, FileAccess.Read);
        _ = PosixFadvise((int)handle.DangerousGetHandle(), 0, 0, PosixFadvDontNeed);
    }

    private const int PosixFadvDontNeed = 4;

    [DllImport("libc", EntryPoint = "posix_fadvise", SetLastError = false)]
    private static extern int PosixFadvise(int fd, long offset, long length, int advice);
}
