namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// Which jobs a process may run. Built-in jobs always. A user job's assembly, or a streaming job's programs: from any
/// path in a process the user runs for himself (the simulator, <see cref="AnyPath"/>); on a server, only from the
/// directory its operator allows, named by file name, so that whoever reaches a front-end cannot make every server
/// load or run code from anywhere.
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
        if (_anyPath || !(spec.IsUserJob || spec.IsStreamingJob))
        {
            return JobRegistry.Create(spec);
        }
        if (spec.IsStreamingJob)
        {
            return StreamingJob.FromOptions(spec.Options, FindProgram);
        }
        int hash = spec.Target.LastIndexOf('#');
        // Checked and loaded from one open file: a link swapped between a check by path and a load by path would
        // load whatever it then pointed at.
        var (image, path) = OpenAssembly(spec.Target[..hash]);
        using (image)
        {
            return JobRegistry.Load(image, path, spec.Target[(hash + 1)..], spec.Options);
        }
    }

    /// <summary>
    /// Opens job assembly <paramref name="name"/> of the allowed directory, or says why it is refused: the file the
    /// kernel opened must lie in the directory as the kernel resolves it. Links are followed while they stay in it.
    /// </summary>
    public (FileStream Image, string Path) OpenAssembly(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (AssemblyDirectory is null)
        {
            throw new JobLoadException(
                $"job assembly '{name}' refused: this server loads no job assemblies (its config sets no jobAssemblyDirectory); "
              + $"built-in jobs are {string.Join(", ", JobRegistry.BuiltInNames)}");
        }
        if (!IsFileName(name))
        {
            throw new JobLoadException(
                $"job assembly '{name}' refused: name a file of the servers' job assembly directory by its file name alone, "
              + "like MyJobs.dll#MyJobs.MaxJob (no path, no '..')");
        }
        FileStream image;
        try
        {
            image = new FileStream(Path.Combine(AssemblyDirectory, name), FileMode.Open, FileAccess.Read, FileShare.Read);
        }
        catch (Exception e) when (e is FileNotFoundException or DirectoryNotFoundException)
        {
            throw new JobLoadException($"job assembly '{name}' is not in this server's job assembly directory {AssemblyDirectory}", e);
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new JobLoadException($"job assembly '{name}' cannot be opened: {e.Message}", e);
        }
        string? opened = KernelPaths.Opened(image.SafeFileHandle);
        string? directory = KernelPaths.Real(AssemblyDirectory);
        if (opened is null || directory is null || !string.Equals(Path.GetDirectoryName(opened), directory, StringComparison.Ordinal))
        {
            image.Dispose();
            throw new JobLoadException(opened is null || directory is null
                ? $"job assembly '{name}' refused: where it lies cannot be checked (this server has no /proc)"
                : $"job assembly '{name}' refused: it is a link leading out of the job assembly directory {AssemblyDirectory}");
        }
        return (image, opened);
    }

    /// <summary>
    /// A streaming job's program <paramref name="name"/> (role <paramref name="role"/>) of the allowed directory, or why
    /// it is refused. It runs by the path the kernel resolves, which must lie in the directory: links are followed
    /// while they stay in it.
    /// </summary>
    public StreamingCommand FindProgram(string role, string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        if (AssemblyDirectory is null)
        {
            throw new JobLoadException(
                $"{role} '{name}' refused: this server runs no job programs (its config sets no jobAssemblyDirectory); "
              + $"built-in jobs are {string.Join(", ", JobRegistry.BuiltInNames)}");
        }
        if (!IsFileName(name))
        {
            throw new JobLoadException(
                $"{role} '{name}' refused: name a file of the servers' job assembly directory by its file name alone, "
              + "like wordcount_mapper.py (no path, no '..')");
        }
        string path = Path.Combine(AssemblyDirectory, name);
        if (!File.Exists(path))
        {
            throw new JobLoadException($"{role} '{name}' is not in this server's job assembly directory {AssemblyDirectory}");
        }
        string? real = KernelPaths.Real(path);
        string? directory = KernelPaths.Real(AssemblyDirectory);
        if (real is null || directory is null || !string.Equals(Path.GetDirectoryName(real), directory, StringComparison.Ordinal))
        {
            throw new JobLoadException(real is null || directory is null
                ? $"{role} '{name}' refused: where it lies cannot be checked"
                : $"{role} '{name}' refused: it is a link leading out of the job assembly directory {AssemblyDirectory}");
        }
        var command = new StreamingCommand(role, name, real);
        StreamingJob.CheckExecutable(command);
        return command;
    }

    /// <summary>A file's name alone: no directory, no '..', no control character.</summary>
    private static bool IsFileName(string name) =>
        name.Length > 0 && name is not ("." or "..") && name.IndexOfAny(['/', '\\']) < 0 && !Path.IsPathRooted(name) && !name.Any(char.IsControl);
}
