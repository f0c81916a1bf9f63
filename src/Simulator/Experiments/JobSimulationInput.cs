using System.Diagnostics;
using System.Runtime.ExceptionServices;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Records;

namespace Camdoop.Experiments;

/// <summary>
/// Every server's input and map output for a simulated job, made outside the event loop (map costs no virtual
/// time, as in the paper) on all cores, deterministically. Runs that differ only in mode or service settings share
/// one: the map outputs are read-only. Keeps the raw inputs when asked (for the reference check, or to map again
/// for another R).
/// </summary>
public sealed class JobSimulationInput : IDisposable
{
    private readonly string? _directory;

    private readonly Func<int, MapOutput> _remap;

    private JobSimulationInput(IMapReduceJob job, int reduceTasks, MapOutput[] maps, IReadOnlyList<byte[]>? inputs, long inputBytes, double wallSeconds, string? directory,
        Func<int, MapOutput> remap)
    {
        _remap = remap;
        Job = job;
        ReduceTasks = reduceTasks;
        MapOutputs = maps;
        Inputs = inputs;
        InputBytes = inputBytes;
        WallSeconds = wallSeconds;
        _directory = directory;
    }

    public IMapReduceJob Job { get; }

    public int ReduceTasks { get; }

    /// <summary>One map output per server (server index order).</summary>
    public IReadOnlyList<MapOutput> MapOutputs { get; }

    /// <summary>The raw inputs, when kept.</summary>
    public IReadOnlyList<byte[]>? Inputs { get; }

    public long InputBytes { get; }

    /// <summary>Wall time spent generating and mapping.</summary>
    public double WallSeconds { get; }

    /// <summary>
    /// Maps server <paramref name="server"/>'s input again, in memory (a map task of a failed server run again
    /// elsewhere): the same input, generated or read again, gives the same output. Thread-safe.
    /// </summary>
    public MapOutput Remap(int server) => _remap(server);

    /// <summary>Whether the map outputs are run files on disk (else runs in memory).</summary>
    public bool OnDisk => _directory is not null;

    /// <summary>
    /// Whether the map outputs of <paramref name="inputBytes"/> of input belong in memory when the user did not say:
    /// they take one to two times the input (record headers, 4-byte counters), and up to an eighth of
    /// <paramref name="availableMemoryBytes"/> may go to them. On disk they cost the page cache's copies both ways
    /// and deleting the files afterwards (8x8x8 with 2 MB per server: about a second of a 12-second run).
    /// </summary>
    public static bool MapOutputFitsInMemory(long inputBytes, long availableMemoryBytes) =>
        inputBytes >= 0 && inputBytes <= availableMemoryBytes / 16;

    /// <summary>
    /// Generates (or reads) and maps every server's input for <paramref name="options"/> (its torus, workload, S,
    /// size, seed, job and R). <paramref name="rawInputs"/>, when given, are used instead of generating.
    /// </summary>
    public static JobSimulationInput Prepare(JobSimulationOptions options, bool keepInputs = false, IReadOnlyList<byte[]>? rawInputs = null,
        IProgress<JobSimulationProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var wall = Stopwatch.StartNew();
        var torus = options.Torus;
        int n = torus.Count;
        var job = JobRegistry.Create(options.Job ?? JobSimulation.BuiltInJob(options.Workload));
        var sourceOf = SourceIndices(options);
        var source = rawInputs is null ? InputSource.Create(options, job, options.MapServers?.Count ?? n) : null;
        var inputs = keepInputs ? new byte[n][] : null;
        var maps = new MapOutput[n];
        string? directory = options.MapOutputOnDisk
            ? Path.Combine(options.DataRoot ?? Path.GetTempPath(), $"camdoop-maps-{Environment.ProcessId}-{Guid.NewGuid():N}")
            : null;
        long inputBytes = 0;
        int mapped = 0;
        try
        {
            // Each worker generates into one buffer, reused server after server, unless the inputs are kept.
            Parallel.For(0, n, new ParallelOptions { MaxDegreeOfParallelism = options.MapParallelism > 0 ? options.MapParallelism : Environment.ProcessorCount },
                () => Array.Empty<byte>(), (s, _, buffer) =>
            {
                int from = sourceOf[s];
                var whole = rawInputs is not null ? rawInputs[s] : from < 0 ? [] : inputs is not null ? source!.Server(from) : null;
                if (inputs is not null)
                {
                    inputs[s] = whole!;
                }
                var input = whole ?? source!.Server(from, ref buffer);
                Interlocked.Add(ref inputBytes, input.Length);
                var c = torus.CoordinateOf(s);
                ulong mapTaskId = JobPlacement.MapTaskId(torus, c, DatasetGenerator.FileName(s)).Middle;
                try
                {
                    maps[s] = MapTask.Run(job, input, new MapTaskOptions
                    {
                        ReduceTasks = options.ReduceTasks,
                        JobId = options.JobId,
                        MapTaskId = mapTaskId,
                        OutputDirectory = directory is null ? null : Path.Combine(directory, $"{c.X}-{c.Y}-{c.Z}"),
                    });
                }
                // Input the job cannot read is the user's mistake, not a bug: name the server whose input it was.
                catch (Exception e) when (e is InvalidDataException or RecordTooLargeException or FormatException)
                {
                    throw new InvalidDataException($"the map task of server {c.Name} failed: {e.Message}", e);
                }
                int done = Interlocked.Increment(ref mapped);
                progress?.Report(new JobSimulationProgress("map", (double)done / n, $"{done}/{n} servers mapped"));
                return buffer;
            }, _ => { });
        }
        catch (Exception e)
        {
            foreach (var map in maps)
            {
                map?.Dispose();
            }
            if (directory is not null && Directory.Exists(directory))
            {
                Directory.Delete(directory, recursive: true);
            }
            // Parallel.For wraps what a map task threw; callers want that, not the wrapper.
            if (e is AggregateException { InnerExceptions: [var first, ..] })
            {
                ExceptionDispatchInfo.Throw(first);
            }
            throw;
        }
        MapOutput Remap(int s)
        {
            var input = rawInputs is not null ? rawInputs[s] : inputs is not null ? inputs[s] : sourceOf[s] < 0 ? [] : source!.Server(sourceOf[s]);
            return MapTask.Run(job, input, new MapTaskOptions
            {
                ReduceTasks = options.ReduceTasks,
                JobId = options.JobId,
                MapTaskId = maps[s].MapTaskId,
            });
        }
        return new JobSimulationInput(job, options.ReduceTasks, maps, inputs, inputBytes, wall.Elapsed.TotalSeconds, directory, Remap);
    }

    /// <summary>
    /// The map outputs for <paramref name="options"/> split from <paramref name="oneTask"/>, the same input (torus,
    /// workload, S, size, seed) mapped in memory for one reduce task, on all cores (<see cref="MapOutputSplitter"/>):
    /// the outputs mapping again would give, without generating, parsing and sorting again. A sweep's R = N runs
    /// take theirs from the R = 1 runs of the same S.
    /// </summary>
    public static JobSimulationInput Split(JobSimulationOptions options, JobSimulationInput oneTask)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(oneTask);
        options.Validate();
        var job = JobRegistry.Create(options.Job ?? JobSimulation.BuiltInJob(options.Workload));
        if (!CanSplit(options, oneTask) || job.Name != oneTask.Job.Name)
        {
            throw new ArgumentException("only an in-memory input of the same job and cube, mapped for one reduce task, can be split", nameof(oneTask));
        }
        var wall = Stopwatch.StartNew();
        int n = options.Torus.Count;
        var maps = new MapOutput[n];
        Parallel.For(0, n, new ParallelOptions { MaxDegreeOfParallelism = options.MapParallelism > 0 ? options.MapParallelism : Environment.ProcessorCount },
            s => maps[s] = MapOutputSplitter.Split(job, oneTask.MapOutputs[s], new MapTaskOptions
            {
                ReduceTasks = options.ReduceTasks,
                JobId = options.JobId,
                MapTaskId = oneTask.MapOutputs[s].MapTaskId,
            }));
        MapOutput Remap(int s)
        {
            using var whole = oneTask.Remap(s);
            return MapOutputSplitter.Split(job, whole, new MapTaskOptions
            {
                ReduceTasks = options.ReduceTasks,
                JobId = options.JobId,
                MapTaskId = whole.MapTaskId,
            });
        }
        return new JobSimulationInput(job, options.ReduceTasks, maps, oneTask.Inputs, oneTask.InputBytes, wall.Elapsed.TotalSeconds, directory: null, Remap);
    }

    /// <summary>Whether <see cref="Split"/> can make the input of <paramref name="options"/> from <paramref name="oneTask"/>.</summary>
    public static bool CanSplit(JobSimulationOptions options, JobSimulationInput oneTask) =>
        oneTask.ReduceTasks == 1 && !oneTask.OnDisk && !options.MapOutputOnDisk && oneTask.MapOutputs.Count == options.Torus.Count;

    /// <summary>Generates every server's raw input for <paramref name="options"/> on all cores.</summary>
    public static byte[][] Generate(JobSimulationOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        int n = options.Torus.Count;
        var job = JobRegistry.Create(options.Job ?? JobSimulation.BuiltInJob(options.Workload));
        var sourceOf = SourceIndices(options);
        var source = InputSource.Create(options, job, options.MapServers?.Count ?? n);
        var inputs = new byte[n][];
        Parallel.For(0, n, new ParallelOptions { MaxDegreeOfParallelism = options.MapParallelism > 0 ? options.MapParallelism : Environment.ProcessorCount },
            s => inputs[s] = sourceOf[s] < 0 ? [] : source.Server(sourceOf[s]));
        return inputs;
    }

    /// <summary>
    /// For each server, which server's input of the job's data set it holds: its own, or with map servers the i-th
    /// for the i-th of them (a job on M servers has the data of a cube of M), and -1 for a server outside them.
    /// </summary>
    private static int[] SourceIndices(JobSimulationOptions options)
    {
        int n = options.Torus.Count;
        var sourceOf = new int[n];
        if (options.MapServers is null)
        {
            for (int s = 0; s < n; s++)
            {
                sourceOf[s] = s;
            }
            return sourceOf;
        }
        Array.Fill(sourceOf, -1);
        for (int i = 0; i < options.MapServers.Count; i++)
        {
            sourceOf[options.MapServers[i]] = i;
        }
        return sourceOf;
    }

    public void Dispose()
    {
        foreach (var map in MapOutputs)
        {
            map.Dispose();
        }
        if (_directory is not null && Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }
}
