using System.Diagnostics;
using Camdoop.ChunkStore;
using Camdoop.JobControl;
using Camdoop.JobControl.Wire;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Server;
using Camdoop.Simulator.Network;

namespace Camdoop.Cli.Commands;

/// <summary>
/// Runs a few small jobs on a simulated 2x2x2 cube inside a node process before the node starts: the same services
/// (<see cref="ServerStack"/>) and code paths as a real job (chunk reads from disk, map,
/// map-output runs, merge and combine, the shuffle transport, reduce, output files), so the runtime has compiled,
/// loaded and initialised them before the first real job instead of during it, when every node of a testbed does it
/// at once on shared cores.
/// </summary>
public static class NodeWarmUp
{
    private static readonly Torus Cube = new(2, 2, 2);
    private static readonly Coordinate Coordinator = new(0, 0, 0);

    /// <summary>Runs the jobs under <paramref name="dataRoot"/> (removed afterwards); returns what it did, for the log.</summary>
    public static string Run(string dataRoot)
    {
        try
        {
            return RunJobs(dataRoot);
        }
        finally
        {
            if (Directory.Exists(dataRoot))
            {
                Directory.Delete(dataRoot, recursive: true);
            }
        }
    }

    private static string RunJobs(string dataRoot)
    {
        var clock = Stopwatch.StartNew();
        var cpu = Process.GetCurrentProcess().TotalProcessorTime;
        using var sim = new Simulation(
            new SimulationOptions
            {
                Torus = Cube,
                DataRoot = dataRoot,
                Node = SimulationOptions.DefaultNodeOptions with { BeaconInterval = 100 * NodeOptions.Millisecond },
            },
            host => ServerStack.OnTorus(host));
        sim.Start();
        var corpus = Generate(sim, DatasetKind.Text, "corpus", 48_000, DatasetFormat.Text);
        var records = Generate(sim, DatasetKind.Sort, "records", 20_000, DatasetFormat.Records);
        var jobControl = sim.Host(Coordinator).GetService<JobControlService>()!;
        ulong next = 0;
        foreach (var (job, input, reducers, mode) in new[]
        {
            (WordCountJob.JobName, corpus, 1, ShuffleMode.Camdoop),
            (WordCountJob.JobName, corpus, Cube.Count, ShuffleMode.NoAgg),
            (SortJob.JobName, records, Cube.Count, ShuffleMode.Camdoop),
        })
        {
            // An id whose control key the coordinator owns, as its front-end picks one.
            ulong id = jobControl.NewJobId(() => ++next);
            var tracker = jobControl.Submit(new JobDescription { JobId = id, Job = new JobSpec(job), ReduceTasks = reducers, Mode = mode }, input);
            RunUntil(sim, () => tracker.IsOver, $"warm-up {job} did not finish");
            if (tracker.State != JobState.Done)
            {
                throw new InvalidOperationException($"warm-up {job} failed: {tracker.Failure}");
            }
        }
        double cpuSeconds = (Process.GetCurrentProcess().TotalProcessorTime - cpu).TotalSeconds;
        return FormattableString.Invariant($"warm-up: 3 jobs on a simulated 2x2x2 cube in {clock.Elapsed.TotalSeconds:F2} s ({cpuSeconds:F2} s CPU)");
    }

    /// <summary>Stores one chunk of generated data per server, written through the coordinator's chunk store.</summary>
    private static DatasetManifest Generate(Simulation sim, DatasetKind kind, string name, int bytesPerServer, DatasetFormat format)
    {
        var generator = new DatasetGenerator(new DatasetOptions { Kind = kind, Servers = Cube.Count, BytesPerServer = bytesPerServer, Seed = 1 });
        var inputs = Enumerable.Range(0, Cube.Count).Select(generator.GenerateServer).ToArray();
        var (manifest, chunks) = DatasetManifest.FromInputs(Cube, name, inputs, format, format == DatasetFormat.Records ? SortJob.RecordBytes : 0);
        foreach (var (meta, bytes) in chunks)
        {
            Write(sim, meta, bytes);
        }
        var (m, b) = manifest.ToChunk();
        Write(sim, m, b);
        return manifest;
    }

    private static void Write(Simulation sim, ChunkMeta meta, byte[] bytes)
    {
        WriteResult? result = null;
        sim.Host(Coordinator).GetService<ChunkStoreService>()!.Write(meta, bytes, r => result = r);
        RunUntil(sim, () => result is not null, $"warm-up write of {meta.Dataset} did not finish");
        if (!result!.Ok)
        {
            throw new InvalidOperationException($"warm-up write of {meta.Dataset} failed: {result.Error}");
        }
    }

    private static void RunUntil(Simulation sim, Func<bool> condition, string failure)
    {
        if (!sim.RunUntil(condition, sim.Now + (60L * 1_000_000_000)))
        {
            throw new InvalidOperationException(failure);
        }
    }
}
