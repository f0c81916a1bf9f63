using System.Reflection;
using System.Runtime.Loader;

namespace Camdoop.MapReduce.Jobs;

/// <summary>
/// Turns a <see cref="JobSpec"/> into a job instance: built-in names, a user type loaded from an assembly file, or a
/// streaming job whose programs are given by path.
/// A user job type must be public, implement <see cref="IMapReduceJob"/>, and have a public constructor taking
/// either <c>IReadOnlyDictionary&lt;string, string&gt;</c> (the options) or nothing. Each assembly file is loaded once,
/// into its own <see cref="AssemblyLoadContext"/> that shares Camdoop's assemblies with the host.
/// </summary>
public static class JobRegistry
{
    private static readonly Dictionary<string, Func<IReadOnlyDictionary<string, string>, IMapReduceJob>> BuiltIns =
        new(StringComparer.OrdinalIgnoreCase)
        {
            [WordCountJob.JobName] = _ => new WordCountJob(),
            [SortJob.JobName] = _ => new SortJob(),
            [SyntheticJob.JobName] = _ => new SyntheticJob(),
            [TopKJob.JobName] = options => new TopKJob(options),
            [MedianJob.JobName] = _ => new MedianJob(),
        };

    private static readonly Dictionary<string, Assembly> LoadedAssemblies = new(StringComparer.Ordinal);
    private static readonly Lock LoadLock = new();

    public static IReadOnlyCollection<string> BuiltInNames => BuiltIns.Keys;

    public static IMapReduceJob Create(string spec) => Create(JobSpec.Parse(spec));

    public static IMapReduceJob Create(JobSpec spec)
    {
        ArgumentNullException.ThrowIfNull(spec);
        if (spec.IsUserJob)
        {
            int hash = spec.Target.LastIndexOf('#');
            return Load(spec.Target[..hash], spec.Target[(hash + 1)..], spec.Options);
        }
        if (spec.IsStreamingJob)
        {
            return StreamingJob.FromOptions(spec.Options, StreamingJob.AtPath);
        }
        if (!BuiltIns.TryGetValue(spec.Target, out var factory))
        {
            throw new JobLoadException(
                $"unknown job '{spec.Target}'; built-in jobs are {string.Join(", ", BuiltIns.Keys)}, "
              + "or name a user job as path/to/assembly.dll#Namespace.TypeName");
        }
        try
        {
            return factory(spec.Options);
        }
        catch (ArgumentException e)
        {
            throw new JobLoadException($"job '{spec}': {e.Message}", e);
        }
    }

    /// <summary>Loads <paramref name="typeName"/> from the assembly at <paramref name="assemblyPath"/> and creates it.</summary>
    public static IMapReduceJob Load(string assemblyPath, string typeName, IReadOnlyDictionary<string, string>? options = null) =>
        Create(LoadAssembly(assemblyPath, image: null), assemblyPath, typeName, options);

    /// <summary>
    /// Loads <paramref name="typeName"/> from the assembly file already open as <paramref name="image"/> (whose path is
    /// <paramref name="assemblyPath"/>: its dependencies resolve beside it) and creates it.
    /// </summary>
    public static IMapReduceJob Load(Stream image, string assemblyPath, string typeName, IReadOnlyDictionary<string, string>? options = null)
    {
        ArgumentNullException.ThrowIfNull(image);
        return Create(LoadAssembly(assemblyPath, image), assemblyPath, typeName, options);
    }

    private static IMapReduceJob Create(Assembly assembly, string assemblyPath, string typeName, IReadOnlyDictionary<string, string>? options)
    {
        options ??= new Dictionary<string, string>();
        Type? type;
        try
        {
            type = assembly.GetType(typeName, throwOnError: false);
        }
        catch (Exception e) when (e is FileLoadException or BadImageFormatException or FileNotFoundException)
        {
            throw new JobLoadException($"type '{typeName}' in '{assemblyPath}' could not be loaded: {e.Message}", e);
        }
        if (type is null)
        {
            throw new JobLoadException($"assembly '{assemblyPath}' has no type '{typeName}' (use the full name, with namespace)");
        }
        if (!typeof(IMapReduceJob).IsAssignableFrom(type) || type.IsAbstract || !type.IsPublic)
        {
            throw new JobLoadException(
                $"type '{typeName}' in '{assemblyPath}' is not a public, non-abstract class implementing {nameof(IMapReduceJob)}");
        }
        object?[] args;
        ConstructorInfo? constructor = type.GetConstructor([typeof(IReadOnlyDictionary<string, string>)]);
        if (constructor is not null)
        {
            args = [options];
        }
        else
        {
            constructor = type.GetConstructor(Type.EmptyTypes)
                ?? throw new JobLoadException(
                    $"type '{typeName}' needs a public constructor taking IReadOnlyDictionary<string, string> (the options) or no arguments");
            if (options.Count > 0)
            {
                throw new JobLoadException($"job type '{typeName}' takes no options, but options were given: {string.Join(", ", options.Keys)}");
            }
            args = [];
        }
        try
        {
            return (IMapReduceJob)constructor.Invoke(args);
        }
        catch (TargetInvocationException e) when (e.InnerException is not null)
        {
            throw new JobLoadException($"creating job '{typeName}' failed: {e.InnerException.Message}", e.InnerException);
        }
    }

    private static Assembly LoadAssembly(string assemblyPath, Stream? image)
    {
        string fullPath = Path.GetFullPath(assemblyPath);
        if (image is null && !File.Exists(fullPath))
        {
            throw new JobLoadException($"job assembly '{assemblyPath}' does not exist");
        }
        lock (LoadLock)
        {
            if (LoadedAssemblies.TryGetValue(fullPath, out var loaded))
            {
                return loaded;
            }
            try
            {
                var context = new JobLoadContext(fullPath);
                loaded = image is null ? context.LoadFromAssemblyPath(fullPath) : context.LoadFromStream(image);
            }
            catch (Exception e) when (e is BadImageFormatException or FileLoadException)
            {
                throw new JobLoadException($"'{assemblyPath}' is not a loadable .NET assembly: {e.Message}", e);
            }
            LoadedAssemblies.Add(fullPath, loaded);
            return loaded;
        }
    }

    /// <summary>
    /// Resolves the job assembly's own dependencies next to it, but lets assemblies the host already has (Camdoop,
    /// the runtime libraries) come from the default context, so the job's IMapReduceJob is the host's.
    /// </summary>
    private sealed class JobLoadContext(string assemblyPath) : AssemblyLoadContext($"camdoop-job:{Path.GetFileName(assemblyPath)}")
    {
        private readonly AssemblyDependencyResolver _resolver = new(assemblyPath);

        protected override Assembly? Load(AssemblyName assemblyName)
        {
            if (Default.Assemblies.Any(a => AssemblyName.ReferenceMatchesDefinition(assemblyName, a.GetName()))
                || assemblyName.Name == typeof(IMapReduceJob).Assembly.GetName().Name)
            {
                return null;
            }
            string? path = _resolver.ResolveAssemblyToPath(assemblyName);
            return path is null ? null : LoadFromAssemblyPath(path);
        }
    }
}
