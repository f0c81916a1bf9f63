using System.Collections.Concurrent;
using System.Diagnostics;
using Camdoop.JobControl;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.Runtime.Hosting;

namespace Camdoop.Experiments;

/// <summary>
/// The simulated servers' map tasks. Job control on each simulated server maps the chunks the coordinator assigned
/// it, when it is told to, as a real server does; a map task is a pure function of (job, chunk, R), so every run of
/// one command that asks for the same one (a failure run after its failure-free run, the modes of a sweep, a map task
/// of a failed server run again) gets the output of its first run instead of mapping again. The outputs stay in memory, or as indexed run files under one directory (disk). Map tasks cost no virtual time (the
/// Camdoop paper, §5); their CPU and wall time are counted apart. Thread-safe: simulation partitions map at once.
/// </summary>
public sealed class SharedMapTasks : IMapTaskRunner, IDisposable
{
    /// <summary>How the run files' directory is named: this prefix, the process id, a dash and a unique part.</summary>
    internal const string DirectoryPrefix = "camdoop-maps-";

    private readonly ConcurrentDictionary<(string Job, int Tasks, Key Chunk), Lazy<MapOutput>> _outputs = new();
    private readonly string? _directory;
    private long _cpuNanoseconds;
    private long _firstStart = long.MaxValue;
    private long _lastEnd;
    private int _mapped;

    /// <param name="onDisk">Keep the runs as indexed run files (under a directory of <paramref name="dataRoot"/>, or the temp directory) instead of in memory.</param>
    /// <param name="dataRoot">Where the run files go.</param>
    public SharedMapTasks(bool onDisk = false, string? dataRoot = null)
    {
        _directory = onDisk ? Path.Combine(dataRoot ?? Path.GetTempPath(), $"{DirectoryPrefix}{Environment.ProcessId}-{Guid.NewGuid():N}") : null;
    }

    /// <summary>Whether the runs are files on disk.</summary>
    public bool OnDisk => _directory is not null;

    /// <summary>Map tasks run (not taken from an earlier run).</summary>
    public int Mapped => _mapped;

    /// <summary>CPU seconds the map tasks took (their threads' time; wall time where thread time is unknown).</summary>
    public double CpuSeconds => Interlocked.Read(ref _cpuNanoseconds) / 1e9;

    /// <summary>Starts timing a new run's map tasks: <see cref="WallSeconds"/> counts from its first.</summary>
    public void StartRun()
    {
        Interlocked.Exchange(ref _firstStart, long.MaxValue);
        Interlocked.Exchange(ref _lastEnd, 0);
    }

    /// <summary>Wall seconds from the first map task's start to the last one's end (since <see cref="StartRun"/>).</summary>
    public double WallSeconds
    {
        get
        {
            long first = Interlocked.Read(ref _firstStart), last = Interlocked.Read(ref _lastEnd);
            return first == long.MaxValue ? 0 : (last - first) / (double)Stopwatch.Frequency;
        }
    }

    public MapOutput Run(IMapReduceJob job, JobDescription description, Key chunk, string chunkPath, string dataDirectory)
    {
        ArgumentNullException.ThrowIfNull(job);
        ArgumentNullException.ThrowIfNull(description);
        return Get(job, description.ReduceTasks, chunk, options => MapTask.Run(job, chunkPath, options));
    }

    public MapOutput Run(IMapReduceJob job, JobDescription description, Key chunk, ReadOnlyMemory<byte> bytes, string dataDirectory)
    {
        ArgumentNullException.ThrowIfNull(job);
        ArgumentNullException.ThrowIfNull(description);
        return Get(job, description.ReduceTasks, chunk, options => MapTask.Run(job, bytes, options));
    }

    /// <summary>The output of the map task of <paramref name="chunk"/>, mapped from <paramref name="input"/> on first use.</summary>
    public MapOutput Get(IMapReduceJob job, int reduceTasks, Key chunk, Func<MapTaskOptions, MapOutput> input)
    {
        ArgumentNullException.ThrowIfNull(job);
        ArgumentNullException.ThrowIfNull(input);
        var lazy = _outputs.GetOrAdd((job.Name, reduceTasks, chunk), key => new Lazy<MapOutput>(() => Map(job, reduceTasks, chunk, input)));
        return lazy.Value;
    }

    /// <summary>The output of <paramref name="chunk"/>'s map task if one ran.</summary>
    public MapOutput? Find(IMapReduceJob job, int reduceTasks, Key chunk) =>
        _outputs.TryGetValue((job.Name, reduceTasks, chunk), out var lazy) && lazy.IsValueCreated ? lazy.Value : null;

    private MapOutput Map(IMapReduceJob job, int reduceTasks, Key chunk, Func<MapTaskOptions, MapOutput> input)
    {
        long wallStart = Stopwatch.GetTimestamp();
        long cpuStart = ThreadCpuClock.IsAvailable ? ThreadCpuClock.Nanoseconds() : 0;
        var options = new MapTaskOptions
        {
            ReduceTasks = reduceTasks,
            MapTaskId = chunk.Middle,
            OutputDirectory = _directory is null ? null : Path.Combine(_directory, $"{chunk}-r{reduceTasks}"),
        };
        // Input the job cannot read throws: the worker that ran the task names its server in the job's failure.
        var output = input(options);
        long wallEnd = Stopwatch.GetTimestamp();
        Interlocked.Add(ref _cpuNanoseconds, ThreadCpuClock.IsAvailable
            ? ThreadCpuClock.Nanoseconds() - cpuStart
            : (long)((wallEnd - wallStart) * 1e9 / Stopwatch.Frequency));
        InterlockedMin(ref _firstStart, wallStart);
        InterlockedMax(ref _lastEnd, wallEnd);
        Interlocked.Increment(ref _mapped);
        return output;
    }

    public void Dispose()
    {
        foreach (var lazy in _outputs.Values)
        {
            if (lazy.IsValueCreated)
            {
                lazy.Value.Dispose();
            }
        }
        _outputs.Clear();
        if (_directory is not null && Directory.Exists(_directory))
        {
            Directory.Delete(_directory, recursive: true);
        }
    }

    private static void InterlockedMin(ref long location, long value)
    {
        long current;
        while (value < (current = Interlocked.Read(ref location)) && Interlocked.CompareExchange(ref location, value, current) != current)
        {
        }
    }

    private static void InterlockedMax(ref long location, long value)
    {
        long current;
        while (value > (current = Interlocked.Read(ref location)) && Interlocked.CompareExchange(ref location, value, current) != current)
        {
        }
    }
}
