using System.Globalization;
using Camdoop.Cli.CommandLine;

namespace Camdoop.Cli.Testbed;

/// <summary>
/// Where a testbed keeps its servers' data, configs, logs and job assemblies, private to root: the nodes run as root
/// and load code from it, so whoever could write there could run code as root. By default under
/// <see cref="DefaultParent"/> (root's, never world-writable); a directory given by the operator that exists must
/// already be root's and no link. The root and every directory in it are created mode 0700, and the nodes run with
/// umask 077, so their files are 0600.
/// </summary>
public static class TestbedDataRoot
{
    public const string DefaultParent = "/var/lib/camdoop";

    public const UnixFileMode Private = UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute;

    public static string Default(string prefix) => Path.Combine(DefaultParent, $"testbed-{prefix}");

    /// <summary>
    /// Makes <paramref name="path"/> an empty directory private to root (leftovers of an earlier testbed go), or
    /// refuses in one line when it, or the default parent, is not root's or is a link.
    /// </summary>
    public static void Prepare(string path, bool isDefault)
    {
        path = Path.GetFullPath(path);
        if (isDefault)
        {
            CreateDirectory(DefaultParent);
            CheckPrivate(DefaultParent, "the testbeds' data directory");
        }
        if (Exists(path))
        {
            CheckOwnedByRoot(path);
            Directory.Delete(path, recursive: true);
        }
        // Created with its mode; then checked, since an existing directory (one made in a race) is kept as it is.
        CreateDirectory(path);
        CheckPrivate(path, "the data root");
    }

    /// <summary>
    /// Empties a stopped server's data directory as a new disk would be, but for the entries named in
    /// <paramref name="keep"/> (its config and certificates); returns the files removed. Links are removed, not followed.
    /// </summary>
    public static int EmptyServerDirectory(string directory, IReadOnlyCollection<string> keep)
    {
        int removed = 0;
        foreach (var entry in new DirectoryInfo(directory).EnumerateFileSystemInfos())
        {
            if (keep.Contains(entry.Name))
            {
                continue;
            }
            if (entry is DirectoryInfo dir && dir.LinkTarget is null)
            {
                removed += dir.EnumerateFiles("*", SearchOption.AllDirectories).Count();
                dir.Delete(recursive: true);
            }
            else
            {
                entry.Delete();
                removed++;
            }
        }
        return removed;
    }

    /// <summary>Creates <paramref name="path"/> (a directory inside a data root) mode 0700.</summary>
    public static void CreateDirectory(string path)
    {
        if (OperatingSystem.IsWindows())
        {
            throw new CliException("the emulated testbed runs on Linux only");
        }
        Directory.CreateDirectory(path, Private);
    }

    private static bool Exists(string path) => Path.Exists(path) || new FileInfo(path).LinkTarget is not null;

    /// <summary>Refuses <paramref name="path"/> unless it is a directory (not a link) owned by root; its mode bits.</summary>
    private static int CheckOwnedByRoot(string path)
    {
        var (owner, mode, type) = Stat(path);
        if (type != "directory")
        {
            throw new CliException($"--data-root {path} is a {type}, not a directory: refused (a link could redirect root's writes)");
        }
        if (owner != 0)
        {
            throw new CliException($"--data-root {path} belongs to uid {owner}, not root: refused (its owner could replace what the nodes run); remove it or choose another");
        }
        return mode;
    }

    private static void CheckPrivate(string path, string what)
    {
        int mode = CheckOwnedByRoot(path);
        if ((mode & 0b_000_010_010) != 0)
        {
            throw new CliException($"{what} {path} is writable by others (mode {Convert.ToString(mode, 8)}): refused");
        }
    }

    /// <summary>Owner uid, permission bits and file type of <paramref name="path"/> itself (a link is not followed).</summary>
    private static (int Owner, int Mode, string Type) Stat(string path)
    {
        string[] fields = SystemCommand.Run("stat", ["-c", "%u %a %F", "--", path]).Trim().Split(' ', 3);
        return (int.Parse(fields[0], CultureInfo.InvariantCulture), Convert.ToInt32(fields[1], 8), fields[2]);
    }
}
