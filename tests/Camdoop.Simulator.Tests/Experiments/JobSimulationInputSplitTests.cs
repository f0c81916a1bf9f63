using Camdoop.Experiments;
using Camdoop.MapReduce.Records;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

public sealed class JobSimulationInputSplitTests
{
    private static JobSimulationOptions Options(int reduceTasks, bool onDisk = false) => new()
    {
        Torus = new Torus(3, 3, 3),
        Workload = Workload.Synthetic,
        OutputRatio = 0.4,
        Settings = new SimulationSettings { BytesPerServer = 8_000, Seed = 3 },
        ReduceTasks = reduceTasks,
        MapOutputOnDisk = onDisk,
    };

    [Fact]
    public void EveryServersSplitOutputEqualsItsMapForThatManyReduceTasks()
    {
        using var one = JobSimulationInput.Prepare(Options(1));
        using var split = JobSimulationInput.Split(Options(27), one);
        using var direct = JobSimulationInput.Prepare(Options(27));
        Assert.Equal((27, one.InputBytes, false), (split.ReduceTasks, split.InputBytes, split.OnDisk));
        for (int s = 0; s < 27; s++)
        {
            for (int r = 0; r < 27; r++)
            {
                for (int stripe = 0; stripe < Stripes.Count; stripe++)
                {
                    Assert.Equal(direct.MapOutputs[s].Header(r, stripe), split.MapOutputs[s].Header(r, stripe));
                    Assert.True(split.MapOutputs[s].Payload(r, stripe).Span.SequenceEqual(direct.MapOutputs[s].Payload(r, stripe).Span));
                }
            }
        }
    }

    [Fact]
    public void OnlyAnInMemoryInputForOneReduceTaskOfTheSameCubeSplits()
    {
        using var seven = JobSimulationInput.Prepare(Options(7));
        Assert.False(JobSimulationInput.CanSplit(Options(27), seven));
        Assert.Throws<ArgumentException>(() => JobSimulationInput.Split(Options(27), seven));
        using var one = JobSimulationInput.Prepare(Options(1));
        Assert.True(JobSimulationInput.CanSplit(Options(27), one));
        Assert.False(JobSimulationInput.CanSplit(Options(27, onDisk: true), one));
        Assert.False(JobSimulationInput.CanSplit(Options(27) with { Torus = new Torus(3, 3, 4) }, one));
    }
}
