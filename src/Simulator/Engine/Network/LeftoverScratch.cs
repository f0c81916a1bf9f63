using System.Collections.Concurrent;
using System.Diagnostics;
using System.Globalization;

namespace Camdoop.Simulator.Network;

/// <summary>
/// Removes the scratch directories of simulations whose process is gone. A run deletes its own when it ends, but a
/// killed one (a timeout, Ctrl-C) leaves them, and on /dev/shm they hold memory until the machine restarts: gigabytes
/// after a few interrupted 512-server runs. Directories are named PREFIX + process id + "-" + anything; those of a
/// live process (this one included) are kept.
/// </summary>
public static class LeftoverScratch
{
    private static readonly ConcurrentDictionary<string, bool> Swept = new(StringComparer.Ordinal);

    /// <summary>Removes the leftovers named <paramref name="prefix"/>PID-... in <paramref name="directory"/>, once per process; returns how many.</summary>
    public static int RemoveOnce(string directory, string prefix) =>
        Swept.TryAdd(Path.GetFullPath(directory) + "|" + prefix, true) ? Remove(directory, prefix) : 0;

    /// <summary>Removes the leftovers named <paramref name="prefix"/>PID-... in <paramref name="directory"/>; returns how many.</summary>
    public static int Remove(string directory, string prefix)
    {
        ArgumentNullException.ThrowIfNull(directory);
        ArgumentException.ThrowIfNullOrEmpty(prefix);
        int removed = 0;
        try
        {
            foreach (string path in Directory.EnumerateDirectories(directory, prefix + "*"))
            {
                string name = Path.GetFileName(path);
                int dash = name.IndexOf('-', prefix.Length);
                if (dash <= prefix.Length
                    || !int.TryParse(name.AsSpan(prefix.Length, dash - prefix.Length), NumberStyles.None, CultureInfo.InvariantCulture, out int pid)
                    || IsAlive(pid))
                {
                    continue;
                }
                try
                {
                    Directory.Delete(path, recursive: true);
                    removed++;
                }
                catch (Exception e) when (e is IOException or UnauthorizedAccessException)
                {
                    // Another process may be removing it too, or it is not ours to remove: leave it.
                }
            }
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            // The directory itself is missing or unreadable: nothing to sweep.
        }
        return removed;
    }

    private static bool IsAlive(int pid)
    {
        if (pid == Environment.ProcessId)
        {
            return true;
        }
        if (OperatingSystem.IsLinux())
        {
            return Directory.Exists("/proc/" + pid.ToString(CultureInfo.InvariantCulture));
        }
        try
        {
            using var process = Process.GetProcessById(pid);
            return !process.HasExited;
        }
        catch (ArgumentException)
        {
            return false;
        }
    }
}
