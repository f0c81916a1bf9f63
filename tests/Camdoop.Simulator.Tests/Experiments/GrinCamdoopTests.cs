using System.Globalization;
using System.Text;
using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// TCP Camdoop on GRIN (racks plus cables between the servers' free ports): flows pinned to the uplink or to a
/// neighbour's, relayed by the neighbours. Every output must equal the single-process reference MapReduce; with no
/// free port the network is the racks network, to the nanosecond and the byte.
/// </summary>
public sealed class GrinCamdoopTests
{
    public static TheoryData<string, int, Workload, string?, int> Matrix()
    {
        var data = new TheoryData<string, int, Workload, string?, int>();
        // 27 servers: one rack, two free ports (a ring). 64: racks of 40 and 24, three (a ring and a cross-rack cable).
        foreach (var (torus, freePorts) in new[] { ("3x3x3", 2), ("4x4x4", 3) })
        {
            int n = Torus.Parse(torus).Count;
            foreach (var (workload, job) in new (Workload, string?)[]
            {
                (Workload.WordCount, null), (Workload.Sort, null), (Workload.Synthetic, null), (Workload.TopK, "topk?k=15"),
            })
            {
                foreach (int r in new[] { 1, n })
                {
                    data.Add(torus, freePorts, workload, job, r);
                }
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Matrix))]
    public void OutputEqualsTheReference(string torus, int freePorts, Workload workload, string? job, int reduceTasks)
    {
        var options = Options(Torus.Parse(torus), freePorts);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = workload == Workload.Sort ? 3_000 : 4_000, Seed = (ulong)(reduceTasks * 5) + 1 },
            Workload = workload,
            Job = job,
            ReduceTasks = reduceTasks,
        });
        StreamShuffleResults.AssertExact(result, reduceTasks);
        Assert.Equal($"grin{freePorts}", result.Network);
    }

    [Fact]
    public void MedianFromFilesEqualsTheReference()
    {
        string directory = Directory.CreateTempSubdirectory("camdoop-grin-median-").FullName;
        try
        {
            var torus = new Torus(4, 4, 4);
            var random = new Random(9);
            for (int s = 0; s < torus.Count; s++)
            {
                var lines = new StringBuilder();
                for (int i = 0; i < 100; i++)
                {
                    lines.Append(CultureInfo.InvariantCulture, $"g{random.Next(40)}\t{random.Next(1_000_000)}\n");
                }
                File.WriteAllText(Path.Combine(directory, $"server-{s:D5}.input"), lines.ToString());
            }
            foreach (int r in new[] { 1, torus.Count })
            {
                var result = JobSimulation.Run(Options(torus, freePorts: 2) with
                {
                    Workload = Workload.Files,
                    Job = "median",
                    InputPath = directory,
                    ReduceTasks = r,
                });
                StreamShuffleResults.AssertExact(result, r);
            }
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    [Theory]
    [InlineData(1)]
    [InlineData(64)]
    public void NoFreePortIsTheRacksNetworkExactly(int reduceTasks)
    {
        var options = Options(new Torus(4, 4, 4), freePorts: 0);
        options = options with
        {
            Settings = options.Settings with { BytesPerServer = 20_000 },
            Workload = Workload.Synthetic,
            OutputRatio = 0.5,
            ReduceTasks = reduceTasks,
        };
        var grin = JobSimulation.Run(options);
        var racks = JobSimulation.Run(options with { Network = options.Network! with { Kind = NetworkKind.Racks } });
        StreamShuffleResults.AssertExact(grin, reduceTasks);
        StreamShuffleResults.AssertExact(racks, reduceTasks);
        Assert.Equal("grin0", grin.Network);
        Assert.Equal("racks", racks.Network);
        Assert.Equal(racks.ShuffleReduceSeconds, grin.ShuffleReduceSeconds);
        Assert.Equal(racks.LinkBytes, grin.LinkBytes);
        Assert.Equal(racks.LinkFrames, grin.LinkFrames);
        Assert.Equal(racks.AckFrames, grin.AckFrames);
        Assert.Equal(racks.RetransmittedBytes, grin.RetransmittedBytes);
        Assert.Equal(racks.Timeouts, grin.Timeouts);
        Assert.Equal(racks.Tcp!.SwitchDrops, grin.Tcp!.SwitchDrops);
        Assert.Equal(racks.Reducers, grin.Reducers);
    }

    [Fact]
    public void OneThreadAndSeveralGiveTheSameRun()
    {
        var options = Options(new Torus(4, 4, 4), freePorts: 3);
        options = options with
        {
            Settings = options.Settings with { BytesPerServer = 20_000 },
            Workload = Workload.Synthetic,
            OutputRatio = 0.5,
            ReduceTasks = 5,
        };
        var one = JobSimulation.Run(options with { SimulationThreads = 1 });
        var four = JobSimulation.Run(options with { SimulationThreads = 4 });
        StreamShuffleResults.AssertExact(one, 5);
        Assert.Equal(one.ShuffleReduceSeconds, four.ShuffleReduceSeconds);
        Assert.Equal(one.LinkBytes, four.LinkBytes);
        Assert.Equal(one.LinkFrames, four.LinkFrames);
        Assert.Equal(one.Timeouts, four.Timeouts);
        Assert.Equal(one.Reducers, four.Reducers);
    }

    private static JobSimulationOptions Options(Torus torus, int freePorts) => new()
    {
        Torus = torus,
        Mode = ShuffleMode.Tcp,
        Network = new SwitchedNetworkOptions { Kind = NetworkKind.Grin, FreePorts = freePorts },
        // A data-centre timeout keeps the runs that lose their first bursts short in simulated time.
        Tcp = new TcpOptions { MinRto = 1_000_000 },
        OutputRatio = 0.4,
        Settings = new SimulationSettings { Verify = true },
        WriteOutputFiles = true,
        MapParallelism = 1,
    };
}
