using Camdoop.ChunkStore;
using Camdoop.JobControl;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Camdoop.Server;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.MapReduce.Tests.JobControl;

/// <summary>
/// A simulated 3x3x3 cube whose servers run every service a node runs but the front-end (<see cref="ServerStack"/>),
/// driven through the services' own API: store a dataset, submit jobs to their coordinators, kill them.
/// </summary>
internal sealed class JobControlCube : IDisposable
{
    public const long Ms = SimTime.Millisecond;
    public static readonly Torus Cube = new(3, 3, 3);
    public static readonly Coordinate FrontEnd = new(0, 0, 0);

    public JobControlCube(long linkRateBitsPerSecond = 1_000_000_000, JobControlOptions? jobControl = null)
    {
        // No failures here: rare beacons keep the event count down.
        Sim = new Simulation(
            new SimulationOptions { Torus = Cube, LinkRateBitsPerSecond = linkRateBitsPerSecond, Node = SimulationOptions.DefaultNodeOptions with { BeaconInterval = 100 * Ms } },
            host => ServerStack.OnTorus(host, new ServerStackOptions { JobControl = jobControl }));
        Sim.Start();
    }

    public Simulation Sim { get; }

    public ChunkStoreService Store(Coordinate c) => Sim.Host(c).GetService<ChunkStoreService>()!;

    public CamdoopService Camdoop(Coordinate c) => Sim.Host(c).GetService<CamdoopService>()!;

    /// <summary>The job control of the server at the front-end's coordinate (which answers about any job).</summary>
    public JobControlService Jobs => JobsAt(FrontEnd);

    public JobControlService JobsAt(Coordinate c) => Sim.Host(c).GetService<JobControlService>()!;

    /// <summary>The job control of the server that coordinates <paramref name="jobId"/> (the owner of its control key).</summary>
    public JobControlService CoordinatorOf(ulong jobId) => JobsAt(Jobs.CoordinatorOf(jobId)!.Value);

    /// <summary>Submits a job to the server that coordinates it, as a front-end there would.</summary>
    public JobTracker Submit(JobDescription description, DatasetManifest input, string? output = null) =>
        CoordinatorOf(description.JobId).Submit(description, input, output);

    public static byte[][] Corpus(int bytesPerServer, ulong seed = 5)
    {
        var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = Cube.Count, BytesPerServer = bytesPerServer, Seed = seed });
        return Enumerable.Range(0, Cube.Count).Select(generator.GenerateServer).ToArray();
    }

    /// <summary>Stores each input as one chunk (chunk i's primary is server i) and the manifest; returns the manifest.</summary>
    public DatasetManifest Put(string name, IReadOnlyList<byte[]> inputs)
    {
        var (manifest, chunks) = DatasetManifest.FromInputs(Cube, name, inputs);
        foreach (var (meta, bytes) in chunks)
        {
            Write(meta, bytes);
        }
        var (m, b) = manifest.ToChunk();
        Write(m, b);
        return manifest;
    }

    /// <summary>Submits a job at the front-end and runs the cube until it is over.</summary>
    public JobTracker Run(JobDescription description, DatasetManifest input, string? output = null)
    {
        var tracker = Submit(description, input, output);
        RunUntil(() => tracker.IsOver, "the job did not finish");
        return tracker;
    }

    public void RunUntil(Func<bool> condition, string failure, long limit = 120_000 * Ms) =>
        Assert.True(Sim.RunUntil(condition, Sim.Now + limit), failure);

    public void Dispose() => Sim.Dispose();

    private void Write(ChunkMeta meta, byte[] bytes)
    {
        WriteResult? result = null;
        Store(FrontEnd).Write(meta, bytes, r => result = r);
        RunUntil(() => result is not null, "the write did not finish", 60_000 * Ms);
        Assert.True(result!.Ok, result.Error);
    }
}
