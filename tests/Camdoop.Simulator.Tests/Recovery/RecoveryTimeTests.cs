using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Recovery;

/// <summary>
/// At R = N a failed server held a vertex of every reduce task: its neighbours take them over, and the children of
/// those vertices, neighbours of the failed server too, now reach them over two hops, through queues the failure
/// filled with data. The restart requests, the acks coming back and the restarted streams' first segments and FINs
/// all cross those queues. None of them may wait for a retry interval (40 ms) or a doubled timeout: the job ends a
/// few milliseconds after the failure is detected, as a cube without the server takes about 9 ms for the whole job.
/// </summary>
public sealed class RecoveryTimeTests
{
    [Fact]
    public void AtRNTheJobEndsSoonAfterTheFailureIsDetected()
    {
        var options = new JobSimulationOptions
        {
            Torus = new Torus(3, 3, 3),
            Workload = Workload.Synthetic,
            OutputRatio = 1,
            Mode = ShuffleMode.Camdoop,
            ReduceTasks = 27,
            Settings = new SimulationSettings { BytesPerServer = 1 << 20 },
        };
        using var run = new RecoveryRun(options);
        var result = run.Run("0,1,1@0.25T");
        var failure = Assert.Single(result.Failures);
        double detected = failure.DetectedAtSeconds!.Value;
        double after = result.ShuffleReduceSeconds - detected;
        // Before restart requests and acks had room of their own in transit it took 44 ms: three requests were
        // dropped on the way and asked again 40 ms later.
        Assert.True(after < 0.020, $"the job ended {after * 1e3:0.0} ms after the failure was detected (T = {run.T / 1e6:0.0} ms)");
        Assert.True(result.Recovery!.VerticesAdopted > 27, $"{result.Recovery.VerticesAdopted} vertices taken over: the failure must hit every task");
    }
}
