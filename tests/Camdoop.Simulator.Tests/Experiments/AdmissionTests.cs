using Camdoop.Experiments;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.DirectShuffle.Plans;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// TCP Camdoop's reducer-driven admission: each receiving end (a reducer, an interior vertex) lets a few of its
/// children send at a time. However small the bound, and with admission off (push), every output must equal the
/// single-process reference MapReduce; and a stream admitted before its sender's job started still goes.
/// </summary>
public sealed class AdmissionTests
{
    public static TheoryData<Workload, bool, int> Matrix()
    {
        var data = new TheoryData<Workload, bool, int>();
        foreach (var workload in new[] { Workload.WordCount, Workload.Sort })
        {
            foreach (bool everyServer in new[] { false, true })
            {
                foreach (int fetches in new[] { 1, 2 })
                {
                    data.Add(workload, everyServer, fetches);
                }
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Matrix))]
    public void AFewStreamsAtATimeGiveTheReference(Workload workload, bool everyServer, int fetches)
    {
        var torus = new Torus(3, 3, 3);
        int reduceTasks = everyServer ? torus.Count : 1;
        var options = Options(torus, Aggregation.Direct, new DirectShuffleOptions { ParallelFetches = fetches });
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = workload == Workload.Sort ? 3_000 : 4_000 },
            Workload = workload,
            ReduceTasks = reduceTasks,
        });
        StreamShuffleResults.AssertExact(result, reduceTasks);
        Assert.Equal(fetches, result.Tcp!.ParallelFetches);
        // Every data stream is admitted once: one admission stream each.
        Assert.Equal(2L * reduceTasks * (torus.Count - 1), result.Tcp.Connections);
    }

    [Theory]
    [InlineData(Aggregation.Binary)]
    [InlineData(Aggregation.Chain)]
    public void InteriorVerticesAdmitTheirChildrenAndGiveTheReference(Aggregation aggregation)
    {
        var torus = new Torus(3, 3, 3);
        var options = Options(torus, aggregation, new DirectShuffleOptions { ParallelFetches = 1 });
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 4_000 },
            Workload = Workload.WordCount,
            ReduceTasks = 3,
        });
        StreamShuffleResults.AssertExact(result, 3);
        Assert.True(result.MergedBytes > 0);
    }

    [Fact]
    public void PushingStillGivesTheReference()
    {
        var torus = new Torus(3, 3, 3);
        var options = Options(torus, Aggregation.Direct, new DirectShuffleOptions { Push = true });
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 4_000 },
            Workload = Workload.WordCount,
            ReduceTasks = 1,
        });
        StreamShuffleResults.AssertExact(result, 1);
        Assert.Equal(0, result.Tcp!.ParallelFetches);
        Assert.Equal(torus.Count - 1, result.Tcp.Connections); // no admissions
    }

    [Fact]
    public void TheBoundIsAsManyInitialWindowsAsTheSwitchBufferHolds()
    {
        Assert.Equal(2, new DirectShuffleOptions { AssumedBufferBytes = 256 * 1024, InitialWindowBytes = 10 * 9_000 }.AdmissionBound);
        Assert.Equal(1, new DirectShuffleOptions { AssumedBufferBytes = 32 * 1024, InitialWindowBytes = 10 * 9_000 }.AdmissionBound);
        Assert.Equal(5, new DirectShuffleOptions { ParallelFetches = 5 }.AdmissionBound);
        Assert.Equal(int.MaxValue, new DirectShuffleOptions { Push = true }.AdmissionBound);
    }

    /// <summary>
    /// The reducer starts first and admits a sender whose job has not started yet (on real servers the start reaches
    /// each at its own time): the admission is kept until it does, and the job completes.
    /// </summary>
    [Fact]
    public void AnAdmissionThatComesBeforeItsSendersJobIsKept()
    {
        var description = WordCountJob(0xAD);
        using var cube = new EightServers(new DirectShuffleOptions { ParallelFetches = 1 }, description);
        int reducer = cube.Reducer;
        cube.StartJob(h => h == reducer);
        // The reducer's first admission reaches a server that has no job yet.
        cube.Sim.RunUntil(() => false, 5_000_000L);
        Assert.Empty(cube.Completed);
        cube.StartJob(h => h != reducer);
        Assert.True(cube.Sim.RunUntil(() => cube.Completed.Count == 1, 10_000_000_000L), "the job did not complete");
        Assert.Null(cube.Services[reducer].GetJob(description.JobId)!.Failure);
    }

    /// <summary>
    /// A job's own admission settings (`submit --push`, `--parallel-fetches`) override the servers': every server
    /// reads them from the same description, so they agree. Pushing opens one connection per stream; admitting, two.
    /// </summary>
    [Theory]
    [InlineData(false, true, 0, 7)]
    [InlineData(true, false, 1, 14)]
    [InlineData(false, false, 0, 14)]
    public void AJobsOwnAdmissionSettingsOverrideTheServers(bool serversPush, bool jobPushes, int jobFetches, long connections)
    {
        var description = WordCountJob(0xAE) with { Push = jobPushes, ParallelFetches = jobFetches };
        using var cube = new EightServers(new DirectShuffleOptions { Push = serversPush }, description);
        cube.StartJob(_ => true);
        Assert.True(cube.Sim.RunUntil(() => cube.Completed.Count == 1, 10_000_000_000L), "the job did not complete");
        Assert.Equal(connections, cube.Transports.Sum(t => t.SenderTotals.Connections));
        Assert.All(cube.Services, s => Assert.Equal(jobPushes || (serversPush && jobFetches == 0), s.GetJob(description.JobId)!.Options.Push));
    }

    private static JobDescription WordCountJob(ulong id) => new()
    {
        JobId = id,
        Job = JobSpec.Parse("wordcount"),
        ReduceTasks = 1,
        Mode = ShuffleMode.Tcp,
        Output = OutputTarget.LocalFiles(),
    };

    /// <summary>A 2x2x2 on a switch, each server a direct shuffle over simulated TCP, one job's map outputs ready.</summary>
    private sealed class EightServers : IDisposable
    {
        private static readonly Torus Servers = new(2, 2, 2);
        private readonly JobSimulationInput _input;
        private readonly JobDescription _description;
        private readonly string _dataRoot = Directory.CreateTempSubdirectory("camdoop-admission-").FullName;

        public EightServers(DirectShuffleOptions direct, JobDescription description)
        {
            var network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch };
            _input = JobSimulationInput.Prepare(new JobSimulationOptions
            {
                Torus = Servers,
                Settings = new SimulationSettings { BytesPerServer = 20_000 },
                ReduceTasks = 1,
                Mode = ShuffleMode.Tcp,
                Network = network,
                MapParallelism = 1,
            });
            _description = description;
            var roots = JobPlacement.For(Servers, description).RootIndices;
            Reducer = roots[0];
            Plan = new DirectPlan(Servers.Count, roots);
            Sim = new Simulation(new SimulationOptions { Torus = Servers, Network = network, DataRoot = _dataRoot, Threads = 1 }, host =>
            {
                int index = Servers.IndexOf(host.Self);
                Transports[index] = TcpStreamTransport.Install(host, new TcpOptions(), 16 * 1024);
                Services[index] = new DirectShuffleService(host, Transports[index], direct);
                Services[index].ReduceTaskCompleted += Completed.Add;
            });
            Sim.Start();
        }

        public Simulation Sim { get; }

        public DirectPlan Plan { get; }

        /// <summary>The host of the job's one reduce task.</summary>
        public int Reducer { get; }

        public DirectShuffleService[] Services { get; } = new DirectShuffleService[Servers.Count];

        public TcpStreamTransport[] Transports { get; } = new TcpStreamTransport[Servers.Count];

        public List<ReduceTaskResult> Completed { get; } = [];

        /// <summary>Starts the job on the servers <paramref name="which"/> picks.</summary>
        public void StartJob(Func<int, bool> which) => Sim.ForEachServer(h =>
        {
            if (which(h))
            {
                Services[h].StartJob(_description, _input.Job, [_input.MapOutputs[h]], Plan);
            }
        });

        public void Dispose()
        {
            Sim.Dispose();
            _input.Dispose();
            Directory.Delete(_dataRoot, recursive: true);
        }
    }

    private static JobSimulationOptions Options(Torus torus, Aggregation aggregation, DirectShuffleOptions direct) => new()
    {
        Torus = torus,
        Mode = ShuffleMode.Tcp,
        Aggregation = aggregation,
        Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch },
        // A data-centre timeout keeps the runs that lose their first bursts short in simulated time.
        Tcp = new TcpOptions { MinRto = 1_000_000 },
        Direct = direct,
        OutputRatio = 0.4,
        Settings = new SimulationSettings { Verify = true },
        WriteOutputFiles = true,
        MapParallelism = 1,
    };
}
