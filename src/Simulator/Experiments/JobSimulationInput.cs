using System.Diagnostics;
using System.Globalization;
using System.Runtime.ExceptionServices;
using Camdoop.ChunkStore;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Records;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>
/// A simulated job's input, as a dataset in the chunk store: every server's input generated (or read from the user's
/// files) once, on all cores, deterministically, and written as one chunk per server, whose id places its primary
/// replica on that server. <see cref="PlaceInto"/> puts every replica on the disks of a simulation's servers (their
/// chunk stores find them when they start), without simulating the upload. The simulated servers' job control then
/// maps the chunks as a cube's does, through <see cref="MapTasks"/>, which maps each once for every run that shares
/// this input (runs that differ only in mode, service settings or failures). Keeps the raw inputs when asked (for the
/// reference check).
/// </summary>
public sealed class JobSimulationInput : IDisposable
{
    private readonly ChunkFiles _files;
    private readonly (ChunkMeta Meta, string Path)?[] _chunks;
    private readonly Torus _torus;
    private MapOutput[]? _outputs;
    private readonly Lazy<MapOutput> _empty;

    private JobSimulationInput(IMapReduceJob job, int reduceTasks, Torus torus, string name, (ChunkMeta Meta, string Path)?[] chunks, IReadOnlyList<byte[]>? inputs,
        long inputBytes, double wallSeconds, ChunkFiles files, SharedMapTasks mapTasks)
    {
        Job = job;
        ReduceTasks = reduceTasks;
        _torus = torus;
        DatasetName = name;
        _chunks = chunks;
        Inputs = inputs;
        InputBytes = inputBytes;
        WallSeconds = wallSeconds;
        _files = files;
        MapTasks = mapTasks;
        _empty = new Lazy<MapOutput>(() => MapTask.Run(Job, ReadOnlyMemory<byte>.Empty, new MapTaskOptions { ReduceTasks = ReduceTasks }));
        var present = chunks.Where(c => c is not null).Select(c => c!.Value.Meta).ToList();
        Manifest = new DatasetManifest
        {
            Name = name,
            Format = present.FirstOrDefault()?.Format ?? DatasetFormat.Text,
            RecordSize = present.FirstOrDefault()?.RecordSize ?? 0,
            TotalBytes = inputBytes,
            Chunks = [.. present.Select(m => new ManifestChunk(m.Id, m.Length, m.Checksum))],
        };
    }

    public IMapReduceJob Job { get; }

    public int ReduceTasks { get; }

    /// <summary>The number of servers the input was written for (one chunk or none each).</summary>
    public int ServerCount => _chunks.Length;

    /// <summary>The dataset's name in the simulated chunk stores.</summary>
    public string DatasetName { get; }

    /// <summary>The dataset a job over this input is submitted with.</summary>
    public DatasetManifest Manifest { get; }

    /// <summary>The simulated servers' map tasks over this input (shared by every run of it).</summary>
    public SharedMapTasks MapTasks { get; }

    /// <summary>The raw inputs, when kept.</summary>
    public IReadOnlyList<byte[]>? Inputs { get; }

    public long InputBytes { get; }

    /// <summary>Wall time spent generating the input, writing its chunks and mapping them.</summary>
    public double WallSeconds { get; }

    /// <summary>Whether map outputs are run files on disk (else runs in memory).</summary>
    public bool OnDisk => MapTasks.OnDisk;

    /// <summary>The id of the chunk server <paramref name="server"/> holds the input of, or null when it holds none.</summary>
    public Key? ChunkOf(int server) => _chunks[server]?.Meta.Id;

    /// <summary>
    /// One map output per server (server index order): the output of its chunk's map task (mapped now if no run has
    /// yet), or an empty one for a server without input. What the switch bounds and the reports read.
    /// </summary>
    public IReadOnlyList<MapOutput> MapOutputs
    {
        get
        {
            if (_outputs is not null)
            {
                return _outputs;
            }
            var outputs = new MapOutput[_chunks.Length];
            Parallel.For(0, _chunks.Length, s => outputs[s] = _chunks[s] is { } chunk ? Map(chunk) : _empty.Value);
            _outputs = outputs;
            return outputs;
        }
    }

    /// <summary>
    /// Maps every chunk now, on every core, unless a run already did: a map task is a pure function of its chunk, so
    /// the simulated servers' map tasks then take their outputs from <see cref="MapTasks"/> at once instead of mapping
    /// one after another on the simulation's threads. A chunk the job cannot read is left to the server that maps it,
    /// which fails the job naming itself (the map tasks keep the error).
    /// </summary>
    public void MapAll() => Parallel.For(0, _chunks.Length, s =>
    {
        if (_chunks[s] is { } chunk)
        {
            TryMap(() => Map(chunk));
        }
    });

    private MapOutput Map((ChunkMeta Meta, string Path) chunk) =>
        MapTasks.Get(Job, ReduceTasks, chunk.Meta.Id, options => MapTask.Run(Job, chunk.Path, options));

    /// <summary>
    /// Runs a map task ahead of the simulated server that needs it. Input the job cannot read, or a streaming job's
    /// program that fails, throws; the shared map tasks keep the error, and the server that maps the chunk fails the
    /// job with it, naming itself.
    /// </summary>
    private static void TryMap(Action map)
    {
        try
        {
            map();
        }
        catch (Exception e) when (e is InvalidDataException or RecordTooLargeException or FormatException or StreamingCommandException)
        {
        }
    }

    /// <summary>
    /// Whether the map outputs of <paramref name="inputBytes"/> of input belong in memory when the user did not say:
    /// they take one to two times the input (record headers, 4-byte counters), and up to an eighth of
    /// <paramref name="availableMemoryBytes"/> may go to them. On disk they cost the page cache's copies both ways
    /// and deleting the files afterwards (8x8x8 with 2 MB per server: about a second of a 12-second run).
    /// </summary>
    public static bool MapOutputFitsInMemory(long inputBytes, long availableMemoryBytes) =>
        inputBytes >= 0 && inputBytes <= availableMemoryBytes / 16;

    /// <summary>The name every server's chunk is named by in its map task's id (JobPlacement.MapTaskId).</summary>
    internal static string ChunkName(string dataset, int server) =>
        dataset == DefaultName ? DatasetGenerator.FileName(server) : $"{dataset}/{DatasetGenerator.FileName(server)}";

    /// <summary>The dataset name of a job's input unless its caller names it.</summary>
    public const string DefaultName = "input";

    /// <summary>How a run's input directory is named: this prefix, the process id, a dash and a unique part.</summary>
    private const string InputDirectoryPrefix = "camdoop-input-";

    /// <summary>
    /// Generates (or reads) every server's input for <paramref name="options"/> (its torus, workload, S, size, seed
    /// and job) and writes it as a dataset named <paramref name="name"/>. <paramref name="rawInputs"/>, when given,
    /// are used instead of generating.
    /// </summary>
    public static JobSimulationInput Prepare(JobSimulationOptions options, bool keepInputs = false, IReadOnlyList<byte[]>? rawInputs = null,
        IProgress<JobSimulationProgress>? progress = null, string name = DefaultName)
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
        var chunks = new (ChunkMeta, string)?[n];
        string scratch = SimulationScratch.RootFor(options);
        LeftoverScratch.RemoveOnce(scratch, InputDirectoryPrefix);
        LeftoverScratch.RemoveOnce(scratch, SharedMapTasks.DirectoryPrefix);
        string directory = Path.Combine(scratch, $"{InputDirectoryPrefix}{Environment.ProcessId}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(directory);
        var format = job.InputFormat.Kind == InputKind.TextLines ? DatasetFormat.Text : DatasetFormat.Records;
        int recordSize = format == DatasetFormat.Records ? job.InputFormat.RecordSize : 0;
        long inputBytes = 0;
        int written = 0;
        var mapTasks = new SharedMapTasks(options.MapOutputOnDisk, scratch);
        try
        {
            // Each worker generates into one buffer, reused server after server, unless the inputs are kept.
            Parallel.For(0, n, new ParallelOptions { MaxDegreeOfParallelism = options.MapParallelism > 0 ? options.MapParallelism : Environment.ProcessorCount },
                () => Array.Empty<byte>(), (s, _, buffer) =>
                {
                    int from = sourceOf[s];
                    if (from < 0)
                    {
                        // A server outside the job's map servers holds none of its input.
                        if (inputs is not null)
                        {
                            inputs[s] = [];
                        }
                        return buffer;
                    }
                    var whole = rawInputs is not null ? rawInputs[s] : inputs is not null ? source!.Server(from) : null;
                    if (inputs is not null)
                    {
                        inputs[s] = whole!;
                    }
                    var input = whole ?? source!.Server(from, ref buffer);
                    Interlocked.Add(ref inputBytes, input.Length);
                    var c = torus.CoordinateOf(s);
                    var meta = new ChunkMeta
                    {
                        Id = JobPlacement.MapTaskId(torus, c, ChunkName(name, s)),
                        Kind = ChunkKind.Data,
                        Length = input.Length,
                        Checksum = XxHash64.Hash(input.Span),
                        Dataset = name,
                        Index = s,
                        Count = n,
                        Format = format,
                        RecordSize = recordSize,
                    };
                    string path = Path.Combine(directory, string.Create(CultureInfo.InvariantCulture, $"{s}.data"));
                    using (var file = File.Create(path))
                    {
                        file.Write(input.Span);
                    }
                    chunks[s] = (meta, path);
                    // Mapped now, while its bytes are in memory, rather than read back when a simulated server maps it:
                    // a map task is a pure function of its chunk, and the servers' map tasks take their outputs from
                    // the shared ones.
                    TryMap(() => mapTasks.Get(job, options.ReduceTasks, meta.Id, o => MapTask.Run(job, input, o)));
                    int done = Interlocked.Increment(ref written);
                    progress?.Report(new JobSimulationProgress("input", (double)done / n, $"{done}/{n} servers' input written"));
                    return buffer;
                }, _ => { });
        }
        catch (Exception e)
        {
            mapTasks.Dispose();
            Directory.Delete(directory, recursive: true);
            // Parallel.For wraps what a generator threw; callers want that, not the wrapper.
            if (e is AggregateException { InnerExceptions: [var first, ..] })
            {
                ExceptionDispatchInfo.Throw(first);
            }
            throw;
        }
        return new JobSimulationInput(job, options.ReduceTasks, torus, name, chunks, inputs, inputBytes, wall.Elapsed.TotalSeconds, new ChunkFiles(directory), mapTasks);
    }

    /// <summary>
    /// The same input (torus, workload, S, size, seed and its chunks) for <paramref name="options"/>' R: its map tasks
    /// split from <paramref name="oneTask"/>'s outputs for one reduce task where they ran (<see cref="MapOutputSplitter"/>),
    /// without generating, parsing and sorting again. A sweep's R = N runs take theirs from the R = 1 runs of the same S.
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
        var mapTasks = new SharedMapTasks();
        // Now, while the one-task outputs are there: the caller may let them go.
        Parallel.For(0, oneTask._chunks.Length, new ParallelOptions { MaxDegreeOfParallelism = options.MapParallelism > 0 ? options.MapParallelism : Environment.ProcessorCount }, s =>
        {
            if (oneTask._chunks[s] is { } chunk && oneTask.MapTasks.Find(oneTask.Job, 1, chunk.Meta.Id) is { } whole)
            {
                mapTasks.Get(job, options.ReduceTasks, chunk.Meta.Id, o => MapOutputSplitter.Split(job, whole, o));
            }
        });
        return new JobSimulationInput(job, options.ReduceTasks, oneTask._torus, oneTask.DatasetName, oneTask._chunks, oneTask.Inputs, oneTask.InputBytes,
            wall.Elapsed.TotalSeconds, oneTask._files.Share(), mapTasks);
    }

    /// <summary>Whether <see cref="Split"/> can make the input of <paramref name="options"/> from <paramref name="oneTask"/>.</summary>
    public static bool CanSplit(JobSimulationOptions options, JobSimulationInput oneTask) =>
        oneTask.ReduceTasks == 1 && !oneTask.OnDisk && !options.MapOutputOnDisk && oneTask._chunks.Length == options.Torus.Count;

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
    /// Puts every replica of every chunk on the disks of <paramref name="sim"/>'s servers (before it starts): each
    /// chunk's three replica servers, as the chunk store places them when every server is up, get its metadata and a
    /// link to its bytes, so no byte is copied.
    /// </summary>
    public void PlaceInto(Simulation sim)
    {
        ArgumentNullException.ThrowIfNull(sim);
        var servers = sim.Servers;
        if (!servers.Equals(_torus))
        {
            throw new ArgumentException($"the input was made for the {_torus} torus, not {servers}", nameof(sim));
        }
        var mapper = KeyMapper.Shared(servers);
        var all = ServerSet.AllOf(servers);
        foreach (var chunk in _chunks)
        {
            if (chunk is not { } placed)
            {
                continue;
            }
            byte[] meta = placed.Meta.ToBytes();
            foreach (var replica in ChunkPlacement.Targets(mapper, placed.Meta.Id, all))
            {
                string directory = Path.Combine(sim.DataDirectoryOf(replica), "chunks");
                Directory.CreateDirectory(directory);
                File.WriteAllBytes(Path.Combine(directory, placed.Meta.Id + ".meta"), meta);
                File.CreateSymbolicLink(Path.Combine(directory, placed.Meta.Id + ".data"), placed.Path);
            }
        }
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
        MapTasks.Dispose();
        if (_empty.IsValueCreated)
        {
            _empty.Value.Dispose();
        }
        _files.Release();
    }

    /// <summary>The chunks' files, shared by the inputs split from one another: deleted when the last lets go.</summary>
    private sealed class ChunkFiles(string directory)
    {
        private int _holders = 1;

        public ChunkFiles Share()
        {
            Interlocked.Increment(ref _holders);
            return this;
        }

        public void Release()
        {
            if (Interlocked.Decrement(ref _holders) == 0 && Directory.Exists(directory))
            {
                Directory.Delete(directory, recursive: true);
            }
        }
    }
}
