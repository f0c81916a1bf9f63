namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// Which jobs a process may run. Built-in jobs always. A user job's assembly: from any path in a process the user
/// runs for himself (the simulator, <see cref="AnyPath"/>); on a server, only from the directory its operator allows,
/// named by file name, so that whoever reaches a front-end cannot make every server load code from anywhere.
/// </summary>
public sealed class JobCatalog
{
    private readonly bool _anyPath;

    private JobCatalog(string? assemblyDirectory, bool anyPath)
    {
        AssemblyDirectory = assemblyDirectory;
        _anyPath = anyPath;
    }

    /// <summary>User job assemblies load from any path: only for a process that runs its own user's code.</summary>
    public static JobCatalog AnyPath { get; } = new(null, anyPath: true);

    /// <summary>Built-in jobs only: a server whose config allows no job assembly directory.</summary>
    public static JobCatalog BuiltInOnly { get; } = new(null, anyPath: false);

    /// <summary>The directory a server loads job assemblies from (full path); null when it loads none or any.</summary>
    public string? AssemblyDirectory { get; }

    /// <summary>A server's catalog: built-ins, and job assemblies in <paramref name="directory"/> (null: none).</summary>
    public static JobCatalog ForServer(string? directory) =>
        directory is null ? BuiltInOnly : new(Path.TrimEndingDirectorySeparator(Path.GetFullPath(directory)), anyPath: false);

    public IMapReduceJob Create(string spec) => Create(JobSpec.Parse(spec));

    /// <summary>Creates the job; a user job's assembly must be allowed here. Throws <see cref="JobLoadException"/>.</summary>
    public IMapReduceJob Create(JobSpec spec)
    {
        ArgumentNullException.ThrowIfNull(spec);
        if (!spec.IsUserJob || _anyPath)
        {
            return JobRegistry.Create(spec);
        }
        int hash = spec.Target.LastIndexOf('#');
        return JobRegistry.Load(ResolveAssembly(spec.Target[..hash]), spec.Target[(hash + 1)..], spec.Options);
    }

    /// <summary>The full path of job assembly <paramref name="name"/> in the allowed directory, or why it is refused.</summary>
    public string ResolveAssembly(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (_anyPath)
        {
            return name;
        }
        if (AssemblyDirectory is null)
        {
            throw new JobLoadException(
                $"job assembly '{name}' refused: this server loads no job assemblies (its config sets no jobAssemblyDirectory); "
              + $"built-in jobs are {string.Join(", ", JobRegistry.BuiltInNames)}");
        }
        if (name.Length == 0 || name is "." or ".." || name.IndexOfAny(['/', '\\']) >= 0 || Path.IsPathRooted(name) || name.Any(char.IsControl))
        {
            throw new JobLoadException(
                $"job assembly '{name}' refused: name a file of the servers' job assembly directory by its file name alone, "
              + "like MyJobs.dll#MyJobs.MaxJob (no path, no '..')");
        }
        string path = Path.Combine(AssemblyDirectory, name);
        var file = new FileInfo(path);
        if (file.LinkTarget is not null)
        {
            // A link is followed only while it stays in the directory: one leading out would load code from anywhere.
            FileSystemInfo? target;
            try
            {
                target = file.ResolveLinkTarget(returnFinalTarget: true);
            }
            catch (IOException e)
            {
                throw new JobLoadException($"job assembly '{name}' refused: its link cannot be followed: {e.Message}", e);
            }
            if (target is null || !IsInDirectory(target.FullName))
            {
                throw new JobLoadException($"job assembly '{name}' refused: it is a link leading out of the job assembly directory {AssemblyDirectory}");
            }
        }
        if (!file.Exists)
        {
            throw new JobLoadException($"job assembly '{name}' is not in this server's job assembly directory {AssemblyDirectory}");
        }
        return path;
    }

    private bool IsInDirectory(string path)
    {
        string? parent = Path.GetDirectoryName(path);
        if (parent is null)
        {
            return false;
        }
        if (string.Equals(parent, AssemblyDirectory, StringComparison.Ordinal))
        {
            return true;
        }
        // The directory may itself be reached through a link (e.g. /var/lib -> /data/lib).
        var real = new DirectoryInfo(AssemblyDirectory!).ResolveLinkTarget(returnFinalTarget: true);
        return real is not null && string.Equals(parent, Path.TrimEndingDirectorySeparator(real.FullName), StringComparison.Ordinal);
    }
}
