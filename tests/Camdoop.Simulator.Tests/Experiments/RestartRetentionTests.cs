using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// A run without injected failures keeps no bytes for restarts (no parent can fail): the same run, event for event,
/// in less memory. With failures, or when the options say how much to keep, the streams keep them.
/// </summary>
public sealed class RestartRetentionTests
{
    private static JobSimulationOptions Job(CamdoopServiceOptions? service) => new()
    {
        Torus = new Torus(4, 4, 4),
        Workload = Workload.Synthetic,
        OutputRatio = 1,
        Settings = new SimulationSettings { BytesPerServer = 512 * 1024, Verify = true, Service = service },
        ReduceTasks = 1,
        Mode = ShuffleMode.NoAgg,
        MapParallelism = 1,
        SimulationThreads = 1,
        TraceEvents = true,
    };

    [Fact]
    public void WithoutFailuresNothingIsKeptAndTheRunIsTheSame()
    {
        var lean = JobSimulation.Run(Job(null));
        // What a run with failures keeps: the default's size (two windows, two segments and 16 KiB).
        var keeping = JobSimulation.Run(Job(new CamdoopServiceOptions { ResumeRetentionBytes = (2 * 128 * 1024) + (2 * 9000) + (16 * 1024) }));

        Assert.True(lean.Verified, lean.VerificationError);
        Assert.True(keeping.Verified, keeping.VerificationError);
        Assert.NotNull(lean.EventTraceHash);
        Assert.Equal(keeping.EventTraceHash, lean.EventTraceHash);
        Assert.Equal(keeping.ShuffleReduceSeconds, lean.ShuffleReduceSeconds);
        Assert.Equal(keeping.LinkBytes, lean.LinkBytes);
        // The streams near the root carry most of the data: there the kept bytes are most of a server's buffers.
        Assert.True(lean.ShuffleBufferPeakBytes.Max < keeping.ShuffleBufferPeakBytes.Max * 0.8,
            $"peak {lean.ShuffleBufferPeakBytes.Max} without kept bytes against {keeping.ShuffleBufferPeakBytes.Max} with");
    }

    [Fact]
    public void FailuresOrAnExplicitSizeKeepTheBytes()
    {
        var plain = Job(null);
        Assert.Equal(0, plain.ServiceOptionsForRun()!.ResumeRetentionBytes);
        var failing = plain with { Failures = [new InjectedFailure("random", new Coordinate(1, 1, 1), null, 1_000_000)] };
        Assert.Null(failing.ServiceOptionsForRun());
        var explicitSize = Job(new CamdoopServiceOptions { ResumeRetentionBytes = 4096 });
        Assert.Equal(4096, explicitSize.ServiceOptionsForRun()!.ResumeRetentionBytes);
    }
}
