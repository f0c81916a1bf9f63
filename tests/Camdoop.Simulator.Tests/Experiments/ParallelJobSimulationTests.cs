using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// A job simulated on several threads is the same job, to the nanosecond and the byte: every server starts its
/// shuffle at the same instant, so this is where simultaneous events are most common.
/// </summary>
public sealed class ParallelJobSimulationTests
{
    public static TheoryData<string, Workload, int, ShuffleMode, double> Cases() => new()
    {
        { "4x4x4", Workload.Synthetic, 1, ShuffleMode.Camdoop, 0 },
        { "4x4x4", Workload.Synthetic, 64, ShuffleMode.NoAgg, 0 },
        { "3x3x3", Workload.WordCount, 7, ShuffleMode.Camdoop, 0.01 },
        { "3x4x5", Workload.Sort, 5, ShuffleMode.NoAgg, 0.005 },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void ThreadsDoNotChangeTheResult(string torus, Workload workload, int reduceTasks, ShuffleMode mode, double loss)
    {
        var options = new JobSimulationOptions
        {
            Torus = Torus.Parse(torus),
            Workload = workload,
            OutputRatio = 0.5,
            Settings = new SimulationSettings { BytesPerServer = 20_000, Verify = true },
            ReduceTasks = reduceTasks,
            Mode = mode,
            LossRate = loss,
            MapParallelism = 1,
            SimulationThreads = 1,
        };
        var one = JobSimulation.Run(options);
        var two = JobSimulation.Run(options with { SimulationThreads = 2 });
        var four = JobSimulation.Run(options with { SimulationThreads = 4 });
        Assert.True(one.Completed, string.Join("; ", one.Errors));
        Assert.True(one.Verified, one.VerificationError);
        if (loss > 0)
        {
            Assert.True(one.FramesDropped > 0 && one.RetransmittedBytes > 0);
        }
        foreach (var other in new[] { two, four })
        {
            Assert.True(other.Verified, other.VerificationError);
            Assert.Equal(one.ShuffleReduceSeconds, other.ShuffleReduceSeconds);
            Assert.Equal(one.LinkBytes, other.LinkBytes);
            Assert.Equal(one.LinkFrames, other.LinkFrames);
            Assert.Equal(one.DataByteHops, other.DataByteHops);
            Assert.Equal(one.AckFrames, other.AckFrames);
            Assert.Equal(one.FramesDropped, other.FramesDropped);
            Assert.Equal(one.RetransmittedBytes, other.RetransmittedBytes);
            Assert.Equal(one.Timeouts, other.Timeouts);
            Assert.Equal(one.AggregatedBytes, other.AggregatedBytes);
            Assert.Equal(one.BusiestLinkBytes, other.BusiestLinkBytes);
            Assert.Equal(one.Reducers, other.Reducers);
        }
    }
}
