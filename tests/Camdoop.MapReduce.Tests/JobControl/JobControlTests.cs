using Camdoop.ChunkStore;
using Camdoop.JobControl;
using Camdoop.JobControl.Wire;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Reference;
using Camdoop.MapReduce.Tests.Support;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;

namespace Camdoop.MapReduce.Tests.JobControl;

/// <summary>
/// Job submission end to end on the simulator: a dataset in the chunk store, a job submitted to one server's job
/// control, maps at the primary replicas, the Camdoop shuffle, reduce outputs compared byte for byte with the
/// single-process reference.
/// </summary>
public class JobControlTests
{
    private const long Ms = SimTime.Millisecond;
    private static readonly Torus Cube = new(3, 3, 3);
    private static readonly Coordinate FrontEnd = new(0, 0, 0);

    private static byte[][] Corpus(int bytesPerServer = 20_000)
    {
        var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = Cube.Count, BytesPerServer = bytesPerServer, Seed = 5 });
        return Enumerable.Range(0, Cube.Count).Select(generator.GenerateServer).ToArray();
    }

    private static JobDescription WordCount(int reducers, ShuffleMode mode) => new()
    {
        JobId = (ulong)(1000 + (reducers * 2) + (int)mode),
        Job = new JobSpec(WordCountJob.JobName),
        ReduceTasks = reducers,
        Mode = mode,
    };

    [Theory]
    [InlineData(1, ShuffleMode.Camdoop)]
    [InlineData(1, ShuffleMode.NoAgg)]
    [InlineData(27, ShuffleMode.Camdoop)]
    [InlineData(5, ShuffleMode.NoAgg)]
    public void WordCountOutputsEqualTheReference(int reducers, ShuffleMode mode)
    {
        using var cluster = new JobControlCube();
        var inputs = Corpus();
        var manifest = cluster.Put("corpus", inputs);
        var job = cluster.Run(WordCount(reducers, mode), manifest);
        Assert.True(job.State == JobState.Done, job.Failure);
        Assert.Equal(27, job.MapsDone);
        Assert.Equal(inputs.Sum(i => (long)i.Length), job.InputBytes);

        var reference = ReferenceMapReduce.Run(new WordCountJob(), inputs.Select(i => (ReadOnlyMemory<byte>)i).ToList(), reducers);
        for (int r = 0; r < reducers; r++)
        {
            var (server, report) = job.Reduces[r]!.Value;
            var file = Path.Combine(cluster.Sim.DataDirectoryOf(server), report.OutputPath!);
            Assert.Equal(reference.Format(r), File.ReadAllBytes(file));
        }
        // Every map ran at the primary replica of its chunk: each server mapped exactly its own chunk.
        cluster.Sim.RunUntil(cluster.Sim.Now + (2_000 * Ms));
        foreach (var c in Cube.All())
        {
            Assert.False(Directory.Exists(Path.Combine(cluster.Sim.DataDirectoryOf(c), "jobs", $"{job.Description.JobId:x16}", "map-0")), "map outputs are deleted at the end");
        }
    }

    /// <summary>
    /// Every server loads job code only from its allowed directory: a job naming an assembly by path (as a coordinator
    /// that did not check would pass on) fails on every server with the reason; one named by file name runs.
    /// </summary>
    [Fact]
    public void JobAssembliesLoadOnlyFromTheServersDirectory()
    {
        string directory = Directory.CreateTempSubdirectory("camdoop-jobs-").FullName;
        try
        {
            string assembly = typeof(UserScaledCountJob).Assembly.Location;
            File.Copy(assembly, Path.Combine(directory, "UserJobs.dll"));
            using var cluster = new JobControlCube(jobControl: new JobControlOptions { Jobs = JobCatalog.ForServer(directory) });
            var inputs = Corpus(5_000);
            var manifest = cluster.Put("corpus", inputs);

            var refused = cluster.Run(WordCount(1, ShuffleMode.Camdoop) with { JobId = 77, Job = JobSpec.Parse($"{assembly}#{typeof(UserScaledCountJob).FullName}") }, manifest);
            Assert.Equal(JobState.Failed, refused.State);
            Assert.Contains($"job assembly '{assembly}' refused", refused.Failure, StringComparison.Ordinal);
            cluster.Sim.RunUntil(cluster.Sim.Now + (2_000 * Ms));
            var refusedAt = cluster.Sim.Warnings.Where(w => w.Message.Contains("map phase failed here: job assembly", StringComparison.Ordinal)).Select(w => w.Node).ToHashSet();
            Assert.Equal(Cube.Count, refusedAt.Count);

            var job = cluster.Run(WordCount(3, ShuffleMode.Camdoop) with { JobId = 78, Job = JobSpec.Parse($"UserJobs.dll#{typeof(UserScaledCountJob).FullName}?scale=5") }, manifest);
            Assert.True(job.State == JobState.Done, job.Failure);
            var reference = ReferenceMapReduce.Run(new UserScaledCountJob(new Dictionary<string, string> { ["scale"] = "5" }), inputs.Select(i => (ReadOnlyMemory<byte>)i).ToList(), 3);
            for (int r = 0; r < 3; r++)
            {
                var (server, report) = job.Reduces[r]!.Value;
                Assert.Equal(reference.Format(r), File.ReadAllBytes(Path.Combine(cluster.Sim.DataDirectoryOf(server), report.OutputPath!)));
            }
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    [Fact]
    public void OnPathAggregationShufflesFewerBytesThanNoAgg()
    {
        using var cluster = new JobControlCube();
        var manifest = cluster.Put("corpus", Corpus());
        var camdoop = cluster.Run(WordCount(1, ShuffleMode.Camdoop), manifest);
        var noagg = cluster.Run(WordCount(1, ShuffleMode.NoAgg), manifest);
        Assert.Equal(JobState.Done, camdoop.State);
        Assert.Equal(JobState.Done, noagg.State);
        // Final counts arrive with the servers' end acknowledgements.
        Assert.True(camdoop.ShuffleBytes > 0);
        Assert.True(camdoop.ShuffleBytes < noagg.ShuffleBytes, $"camdoop shuffled {camdoop.ShuffleBytes} bytes, noagg {noagg.ShuffleBytes}");
        Assert.Equal(camdoop.Reduces[0]!.Value.Report.Checksum, noagg.Reduces[0]!.Value.Report.Checksum);
    }

    [Fact]
    public void OutputCanGoToTheChunkStoreWithTheReducerAsPrimary()
    {
        using var cluster = new JobControlCube();
        var inputs = Corpus(10_000);
        var manifest = cluster.Put("corpus", inputs);
        var job = cluster.Run(WordCount(3, ShuffleMode.Camdoop), manifest, output: "counts");
        Assert.True(job.State == JobState.Done, job.Failure);
        var reference = ReferenceMapReduce.Run(new WordCountJob(), inputs.Select(i => (ReadOnlyMemory<byte>)i).ToList(), 3);
        var mapper = KeyMapper.Shared(Cube);
        for (int r = 0; r < 3; r++)
        {
            var (server, report) = job.Reduces[r]!.Value;
            var chunk = report.Chunk!.Value;
            Assert.Equal(server, mapper.Owner(chunk, ServerSet.AllOf(Cube)));
            ReadResult? read = null;
            cluster.Store(new Coordinate(2, 2, 2)).Read(chunk, x => read = x);
            Assert.True(cluster.Sim.RunUntil(() => read is not null, cluster.Sim.Now + (30_000 * Ms)));
            Assert.Equal(reference.Format(r), read!.Bytes);
        }
        ReadResult? manifestRead = null;
        cluster.Store(FrontEnd).Read(ChunkPlacement.ManifestId("counts"), x => manifestRead = x);
        Assert.True(cluster.Sim.RunUntil(() => manifestRead is not null, cluster.Sim.Now + (30_000 * Ms)));
        var output = DatasetManifest.Decode(manifestRead!.Bytes);
        Assert.Equal(3, output.Chunks.Count);
        Assert.Equal(reference.Outputs.Sum(o => o.Count), job.Reduces.Sum(r => r!.Value.Report.Records));
    }

    [Fact]
    public void AMissingPrimaryReplicaIsFetchedBeforeItsMapTaskRuns()
    {
        using var cluster = new JobControlCube();
        var inputs = Corpus(5_000);
        var manifest = cluster.Put("corpus", inputs);
        var victim = manifest.Chunks[4].Id;
        var primary = cluster.Store(FrontEnd).PlacementOf(victim)[0];
        Assert.True(cluster.Store(primary).Local.TryGet(victim, out var replica));
        File.Delete(replica.DataPath);

        var job = cluster.Run(WordCount(1, ShuffleMode.Camdoop), manifest);
        Assert.True(job.State == JobState.Done, job.Failure);
        var reference = ReferenceMapReduce.Run(new WordCountJob(), inputs.Select(i => (ReadOnlyMemory<byte>)i).ToList(), 1);
        var (server, report) = job.Reduces[0]!.Value;
        Assert.Equal(reference.Format(0), File.ReadAllBytes(Path.Combine(cluster.Sim.DataDirectoryOf(server), report.OutputPath!)));
        Assert.Equal(inputs[4], File.ReadAllBytes(replica.DataPath));
    }

    [Fact]
    public void AJobWhoseInputIsGoneEverywhereFailsWithTheReason()
    {
        using var cluster = new JobControlCube();
        var manifest = cluster.Put("corpus", Corpus(2_000));
        var victim = manifest.Chunks[0].Id;
        foreach (var c in Cube.All())
        {
            if (cluster.Store(c).Local.TryGet(victim, out var replica))
            {
                File.Delete(replica.DataPath);
            }
        }
        var job = cluster.Run(WordCount(2, ShuffleMode.Camdoop), manifest);
        Assert.Equal(JobState.Failed, job.State);
        Assert.Contains($"input chunk {victim}", job.Failure, StringComparison.Ordinal);
    }
}
