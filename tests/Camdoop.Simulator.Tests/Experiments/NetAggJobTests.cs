using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// NetAgg (mode tcp on a netagg network): workers send to the first agg box on the path, boxes merge and combine up
/// to the reducer. Every output must equal the single-process reference MapReduce over the same input.
/// </summary>
public sealed class NetAggJobTests
{
    public static TheoryData<string, Workload, string?, bool> Matrix()
    {
        var data = new TheoryData<string, Workload, string?, bool>();
        foreach (string torus in new[] { "3x3x3", "4x4x4" })
        {
            foreach (var (workload, job) in new (Workload, string?)[]
            {
                (Workload.WordCount, null), (Workload.Sort, null), (Workload.Synthetic, null), (Workload.TopK, "topk?k=15"),
                (Workload.TopK, "median"),
            })
            {
                foreach (bool everyServer in new[] { false, true })
                {
                    data.Add(torus, workload, job, everyServer);
                }
            }
        }
        return data;
    }

    /// <summary>R = 1 or R = N on racks of 9 (27 servers: three racks) or 24 (64: two full racks and a partial one), a box on every switch.</summary>
    [Theory]
    [MemberData(nameof(Matrix))]
    public void OutputEqualsTheReference(string torus, Workload workload, string? job, bool everyServer)
    {
        var cube = Torus.Parse(torus);
        int reduceTasks = everyServer ? cube.Count : 1;
        var options = Options(cube, cube.Count == 27 ? 9 : 24);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = workload == Workload.Sort ? 2_000 : 3_000, Seed = (ulong)(reduceTasks * 3) + 2 },
            Workload = workload,
            Job = job,
            ReduceTasks = reduceTasks,
        });
        StreamShuffleResults.AssertExact(result, reduceTasks);
        Assert.Equal("netagg", result.Network);
        Assert.Equal("netagg", result.Aggregation);
        var boxes = result.AggBoxes!;
        Assert.Equal(cube.Count == 27 ? 4 : 4, boxes.Count);
        // Every rack's box merges its workers' streams (R = 1: every rack's box is on the path to the one reducer).
        Assert.All(boxes, b => Assert.True(b.MergedBytes > 0, $"{b.Name} merged nothing"));
        Assert.Equal(boxes.Sum(b => b.MergedBytes), result.MergedBytes);
        // The servers merge nothing themselves: no server has children in NetAgg's trees.
        Assert.Equal(result.MergedBytes, boxes.Sum(b => b.MergedBytes));
    }

    /// <summary>
    /// Only the core's box (the paper's partial deployment): the reducer's rack sends straight to it, every other rack
    /// through the core's box. The box merges exactly the other racks' streams.
    /// </summary>
    [Fact]
    public void APartialDeploymentAtTheCoreEqualsTheReference()
    {
        var options = Options(new Torus(3, 3, 3), 9, AggBoxPlacement.Upper);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 4_000 },
            Workload = Workload.WordCount,
            ReduceTasks = 3,
        });
        StreamShuffleResults.AssertExact(result, 3);
        var box = Assert.Single(result.AggBoxes!);
        Assert.Equal("box@core", box.Name);
        Assert.True(box.ForwardedBytes < box.MergedBytes, "WordCount combines at the box");
    }

    [Fact]
    public void TwoTreesPerReduceTaskEqualTheReference()
    {
        var options = Options(new Torus(4, 4, 4), 16);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 4_000 },
            Workload = Workload.Synthetic,
            OutputRatio = 0.5,
            ReduceTasks = 1,
            AggregationTrees = 2,
        });
        StreamShuffleResults.AssertExact(result, 1);
        Assert.Equal(5, result.AggBoxes!.Count);
    }

    /// <summary>
    /// One rack, one box, whose processing rate (0.25 or 0.5 Gbit/s) is far below its 10 Gbit/s cable and the
    /// reducer's 1 Gbit/s link: the box must merge the 26 other servers' Sort records (100-byte records, the same
    /// count on every server, so 26/27 of the intermediate data) before the reducer can finish, and nothing else is as
    /// slow, so the job takes that many bits over the box's rate.
    /// </summary>
    [Theory]
    [InlineData(0.25e9)]
    [InlineData(0.5e9)]
    public void ABoxSlowerThanItsLinkMakesTheJobComputeBoundAtTheBox(double rate)
    {
        var options = Options(new Torus(3, 3, 3), 27);
        var result = JobSimulation.Run(options with
        {
            // A buffer that holds every initial window: no loss, so no timeout hides the box's rate.
            Network = options.Network! with { AggBoxes = new AggBoxOptions { ProcessingBitsPerSecond = rate }, PortBufferBytes = 8 << 20 },
            Workload = Workload.Sort,
            Settings = options.Settings with { BytesPerServer = 40_000 },
            ReduceTasks = 1,
        });
        StreamShuffleResults.AssertExact(result, 1);
        double merged = result.IntermediateEncodedBytes * 26.0 / 27.0;
        double expected = merged * 8 / rate;
        Assert.InRange(result.ShuffleReduceSeconds / expected, 0.99, 1.05);
        Assert.InRange(Assert.Single(result.AggBoxes!).BusySeconds / expected, 0.99, 1.01);
    }

    /// <summary>
    /// With switch buffers that hold every window nothing is lost, and a box that takes in its rack's streams at
    /// 10 Gbit/s while merging at 9.2 must still acknowledge every segment in time: no timeout. At 2 MB per server
    /// the box wakes from merging to many segments at once and their acknowledgements overflow its own port's queue:
    /// they wait for room (and were once dropped, the last of a flight leaving its sender to time out).
    /// </summary>
    [Theory]
    [InlineData(200_000)]
    [InlineData(2 << 20)]
    public void WithoutLossesNoStreamTimesOutAtABusyBox(int bytesPerServer)
    {
        var options = Options(new Torus(4, 4, 4), 40);
        var result = JobSimulation.Run(options with
        {
            Network = options.Network! with { PortBufferBytes = 64 << 20 },
            // Linux's minimum timeout: a 1 ms one fires while a deep queue still holds the segment.
            Tcp = new TcpOptions(),
            Workload = Workload.Synthetic,
            OutputRatio = 0,
            Settings = options.Settings with { BytesPerServer = bytesPerServer, Seed = 1 },
            ReduceTasks = 1,
        });
        StreamShuffleResults.AssertExact(result, 1);
        Assert.Equal(0, result.Tcp!.SwitchDrops);
        Assert.Equal(0, result.Timeouts);
        if (bytesPerServer > 1_000_000)
        {
            Assert.True(result.Tcp.AcksDeferred > 0, "no acknowledgement waited for room: the case no longer tests it");
        }
    }

    [Fact]
    public void OneThreadAndSeveralGiveTheSameRun()
    {
        var options = Options(new Torus(4, 4, 4), 16);
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
        // Link counters are read where the run stopped, which a parallel run may pass by a few events (the last
        // acknowledgements): what happened up to the last reducer's end is compared.
        Assert.Equal(one.ShuffleReduceSeconds, four.ShuffleReduceSeconds);
        Assert.Equal(one.DataBytesSent, four.DataBytesSent);
        Assert.Equal(one.Timeouts, four.Timeouts);
        Assert.Equal(one.AggBoxes, four.AggBoxes);
        Assert.Equal(one.Reducers, four.Reducers);
    }

    internal static JobSimulationOptions Options(Torus torus, int rackSize, AggBoxPlacement placement = AggBoxPlacement.All) => new()
    {
        Torus = torus,
        Mode = ShuffleMode.Tcp,
        Network = new SwitchedNetworkOptions
        {
            Kind = NetworkKind.NetAgg,
            RackSize = rackSize,
            AggBoxes = new AggBoxOptions { Placement = placement },
        },
        Tcp = new TcpOptions { MinRto = 1_000_000 },
        OutputRatio = 0.4,
        Settings = new SimulationSettings { Verify = true },
        WriteOutputFiles = true,
        MapParallelism = 1,
    };
}
