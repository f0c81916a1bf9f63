using System.Globalization;
using System.Text;
using Camdoop.Experiments;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// TCP Camdoop (mode tcp): every map output straight to its reducer over the packet-level TCP through a switched
/// network, merged only at the reducer. Each output must equal the single-process reference MapReduce over the same
/// input, on every network, for every built-in job, at R = 1 and R = N. Inputs are small; the small switch buffers
/// still make the first bursts lose frames, so loss recovery is exercised too.
/// </summary>
public sealed class TcpCamdoopTests
{
    public static TheoryData<string, NetworkKind, Workload, string?, int> Matrix()
    {
        var data = new TheoryData<string, NetworkKind, Workload, string?, int>();
        foreach (string torus in new[] { "3x3x3", "4x4x4" })
        {
            int n = Torus.Parse(torus).Count;
            foreach (var network in new[] { NetworkKind.Switch, NetworkKind.Racks })
            {
                foreach (var (workload, job) in new (Workload, string?)[]
                {
                    (Workload.WordCount, null), (Workload.Sort, null), (Workload.Synthetic, null), (Workload.TopK, "topk?k=15"),
                })
                {
                    foreach (int r in new[] { 1, n })
                    {
                        data.Add(torus, network, workload, job, r);
                    }
                }
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Matrix))]
    public void OutputEqualsTheReference(string torus, NetworkKind network, Workload workload, string? job, int reduceTasks)
    {
        var options = Options(Torus.Parse(torus), network);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = workload == Workload.Sort ? 3_000 : 4_000, Seed = (ulong)(reduceTasks * 7) + 3 },
            Workload = workload,
            Job = job,
            ReduceTasks = reduceTasks,
        });
        StreamShuffleResults.AssertExact(result, reduceTasks);
        Assert.Equal("tcp", result.Mode);
        Assert.Equal(network.Name(), result.Network);
        Assert.NotNull(result.Tcp);
        Assert.True(result.LowerBounds.Switch1G > 0);
    }

    [Fact]
    public void MedianFromFilesOnAFatTreeEqualsTheReference()
    {
        string directory = Directory.CreateTempSubdirectory("camdoop-tcp-median-").FullName;
        try
        {
            var torus = new Torus(3, 3, 3);
            var random = new Random(5);
            for (int s = 0; s < torus.Count; s++)
            {
                var lines = new StringBuilder();
                for (int i = 0; i < 200; i++)
                {
                    lines.Append(CultureInfo.InvariantCulture, $"g{random.Next(40)}\t{random.Next(1_000_000)}\n");
                }
                File.WriteAllText(Path.Combine(directory, $"server-{s:D5}.input"), lines.ToString());
            }
            var result = JobSimulation.Run(Options(torus, NetworkKind.FatTree) with
            {
                Workload = Workload.Files,
                Job = "median",
                InputPath = directory,
                ReduceTasks = 4,
            });
            StreamShuffleResults.AssertExact(result, 4);
            Assert.Equal("fattree", result.Network);
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    /// <summary>
    /// A send buffer of one segment and one stream at a time per server: every stream waits for room after each
    /// segment (the ring wraps at every write) and R = N's streams go one after another; the output is still exact.
    /// </summary>
    [Fact]
    public void ATinySendBufferAndOneStreamAtATimeStillDeliverEverything()
    {
        var options = Options(new Torus(3, 3, 3), NetworkKind.Switch);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 60_000 },
            Workload = Workload.WordCount,
            ReduceTasks = 27,
            TcpSendBufferBytes = TcpWire.MaxSegmentSize + 100,
            Direct = new DirectShuffleOptions { ConcurrentStreams = 1 },
        });
        StreamShuffleResults.AssertExact(result, 27);
        Assert.Equal(1, result.Tcp!.ConcurrentStreams);
    }

    [Fact]
    public void OneThreadAndSeveralGiveTheSameRun()
    {
        var options = Options(new Torus(4, 4, 4), NetworkKind.Racks);
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
        Assert.Equal(one.AckFrames, four.AckFrames);
        Assert.Equal(one.RetransmittedBytes, four.RetransmittedBytes);
        Assert.Equal(one.Timeouts, four.Timeouts);
        Assert.Equal(one.Tcp!.SwitchDrops, four.Tcp!.SwitchDrops);
        Assert.Equal(one.Reducers, four.Reducers);
    }

    /// <summary>
    /// With a buffer that holds every initial window, R = 1 loses nothing and the reducer's link is the bottleneck:
    /// the run is within a few percent above the Switch (1 Gbps) bound, and never below it. Linux's 200 ms smallest
    /// timeout: with the 1 ms one, the queue of 26 senders' windows (about 25 ms deep) outgrows the timeout estimated
    /// from the first, unqueued segments, and every sender times out once and sends again for nothing.
    /// </summary>
    [Fact]
    public void WithoutLossesTheReducersLinkBoundsTheRun()
    {
        var options = Options(new Torus(3, 3, 3), NetworkKind.Switch, bufferBytes: 8 << 20);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 200_000 },
            Tcp = new TcpOptions(),
            Workload = Workload.Synthetic,
            OutputRatio = 1,
            ReduceTasks = 1,
        });
        StreamShuffleResults.AssertExact(result, 1);
        Assert.Equal(0, result.Tcp!.SwitchDrops);
        Assert.Equal(0, result.Timeouts);
        double ratio = result.ShuffleReduceSeconds / result.LowerBounds.Switch1G;
        Assert.InRange(ratio, 1.0, 1.1);
    }

    [Theory]
    [InlineData(ShuffleMode.Tcp, false)]
    [InlineData(ShuffleMode.Camdoop, true)]
    [InlineData(ShuffleMode.NoAgg, true)]
    public void AModeOnTheWrongNetworkIsRefused(ShuffleMode mode, bool switched)
    {
        var options = new JobSimulationOptions
        {
            Torus = new Torus(3, 3, 3),
            Mode = mode,
            Network = switched ? new SwitchedNetworkOptions { Kind = NetworkKind.Switch } : null,
        };
        var error = Assert.Throws<ArgumentException>(options.Validate);
        Assert.Contains(switched ? "torus" : "switch", error.Message, StringComparison.Ordinal);
    }

    private static JobSimulationOptions Options(Torus torus, NetworkKind network, int bufferBytes = 256 * 1024) => new()
    {
        Torus = torus,
        Mode = ShuffleMode.Tcp,
        Network = new SwitchedNetworkOptions { Kind = network, PortBufferBytes = bufferBytes },
        // A data-centre timeout keeps the runs that lose their first bursts short in simulated time.
        Tcp = new TcpOptions { MinRto = 1_000_000 },
        OutputRatio = 0.4,
        Settings = new SimulationSettings { Verify = true },
        WriteOutputFiles = true,
        MapParallelism = 1,
    };
}
