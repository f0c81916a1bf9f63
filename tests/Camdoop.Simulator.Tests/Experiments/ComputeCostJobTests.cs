using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Recovery;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// Jobs with compute priced: a reducer-bound job takes the time its reduce rate gives, outputs stay the reference's,
/// runs stay the same on any number of threads, and failures still recover.
/// </summary>
public sealed class ComputeCostJobTests
{
    private static readonly JobSimulationOptions S1R1 = new()
    {
        Torus = new Torus(3, 3, 3),
        Workload = Workload.Synthetic,
        OutputRatio = 1,
        Settings = new SimulationSettings { BytesPerServer = 100_000, Verify = true },
        ReduceTasks = 1,
        MapParallelism = 1,
    };

    // Well below the root's six 1 Gbit/s links, and below even one of them; merging elsewhere is nearly free.
    private const double ReduceRate = 0.5e9;

    private static ComputeModel Model(double reduce, double merge) => new(ComputeMode.Calibrated, new ComputeRates
    {
        MapBitsPerSecond = 1e9,
        MergeBitsPerSecond = merge,
        ReduceBitsPerSecond = reduce,
    });

    [Fact]
    public void AReducerBoundJobTakesItsBytesOverTheReduceRate()
    {
        var off = JobSimulation.Run(S1R1);
        var on = JobSimulation.Run(S1R1 with { Settings = S1R1.Settings with { Compute = Model(ReduceRate, merge: 1e13) } });
        Assert.True(on.Verified, on.VerificationError);
        Assert.True(off.Verified, off.VerificationError);

        // At S = 1 nothing combines: the root's reduce reads every encoded intermediate byte, each at the reduce rate.
        double expected = on.IntermediateEncodedBytes * 8 / ReduceRate;
        Assert.Equal(off.IntermediateEncodedBytes, on.IntermediateEncodedBytes);
        // The core cannot finish sooner (1 us covers rounding each charge to the nanosecond); it starts late by the
        // time the first frame of every tree takes to reach it, a few frames' serialisation per hop (about 0.4 ms),
        // against 43 ms of work: within 2 %.
        Assert.InRange(on.ShuffleReduceSeconds, expected - 1e-6, expected * 1.02);
        // Without compute the links alone bind: the same job is several times faster.
        Assert.True(off.ShuffleReduceSeconds * 4 < on.ShuffleReduceSeconds, $"off {off.ShuffleReduceSeconds} s, on {on.ShuffleReduceSeconds} s");
        var compute = on.Compute!;
        Assert.Equal(JobPlacement(on), compute.BusiestServer);
        Assert.InRange(compute.BusiestServerBusyFraction, 0.98, 1.0);
        Assert.InRange(compute.BusiestServerReduceSeconds, expected - 1e-6, expected + 1e-6);
        Assert.Null(off.Compute);
    }

    [Fact]
    public void AFasterReducerTakesProportionallyLessTime()
    {
        var slow = JobSimulation.Run(S1R1 with { Settings = S1R1.Settings with { Compute = Model(ReduceRate, merge: 1e13) } });
        var faster = JobSimulation.Run(S1R1 with { Settings = S1R1.Settings with { Compute = Model(2 * ReduceRate, merge: 1e13) } });
        Assert.True(faster.Verified, faster.VerificationError);
        Assert.InRange(slow.ShuffleReduceSeconds / faster.ShuffleReduceSeconds, 1.9, 2.0);
    }

    public static TheoryData<string, Workload, int, ShuffleMode> Cases() => new()
    {
        { "4x4x4", Workload.Synthetic, 1, ShuffleMode.Camdoop },
        { "4x4x4", Workload.Synthetic, 64, ShuffleMode.NoAgg },
        { "3x3x3", Workload.WordCount, 7, ShuffleMode.Camdoop },
        { "3x4x5", Workload.Sort, 5, ShuffleMode.NoAgg },
    };

    [Theory]
    [MemberData(nameof(Cases))]
    public void ThreadsDoNotChangeAPricedRunAndItsOutputIsTheReferences(string torus, Workload workload, int reduceTasks, ShuffleMode mode)
    {
        // Slow enough that every server's core is often busy when its frames and timers fall due.
        var options = new JobSimulationOptions
        {
            Torus = Torus.Parse(torus),
            Workload = workload,
            OutputRatio = 0.5,
            Settings = new SimulationSettings { BytesPerServer = 20_000, Verify = true, Compute = Model(reduce: 0.3e9, merge: 0.5e9) },
            ReduceTasks = reduceTasks,
            Mode = mode,
            MapParallelism = 1,
            SimulationThreads = 1,
        };
        var (one, oneState) = RunWithSnapshots(options);
        Assert.True(one.Completed, string.Join("; ", one.Errors));
        Assert.True(one.Verified, one.VerificationError);
        Assert.True(one.Compute!.BusiestServerBusyFraction > 0.2, $"busiest core busy {one.Compute.BusiestServerBusyFraction:P0}");
        Assert.True(oneState.Count >= 4, $"only {oneState.Count} snapshots before the end");
        foreach (int threads in new[] { 2, 4 })
        {
            var (other, otherState) = RunWithSnapshots(options with { SimulationThreads = threads });
            Assert.True(other.Verified, other.VerificationError);
            Assert.Equal(one.ShuffleReduceSeconds, other.ShuffleReduceSeconds);
            Assert.Equal(one.Reducers, other.Reducers);
            // Where a run stops depends on the threads (they meet every 64 link delays, and the last reducer finishes
            // its work after the event that began it); up to there, the cube is the same at every instant.
            int common = Math.Min(oneState.Count, otherState.Count);
            Assert.True(common >= oneState.Count - 8, $"{threads} threads: {otherState.Count} snapshots against {oneState.Count}");
            Assert.Equal(oneState.Take(common), otherState.Take(common));
        }
    }

    /// <summary>The run, and the cube's link totals and busy time summed over cores every 100 us until it ended.</summary>
    private static (JobSimulationResult Result, List<(long At, LinkStats Links, long Busy)> State) RunWithSnapshots(JobSimulationOptions options)
    {
        var state = new List<(long At, LinkStats Links, long Busy)>();
        var result = JobSimulation.Run(options with
        {
            Configure = sim =>
            {
                for (long at = 100_000; at < 100_000_000; at += 100_000)
                {
                    long t = at;
                    sim.Schedule(t, () => state.Add((t, sim.LinkTotals, Enumerable.Range(0, sim.Torus.Count).Sum(s => sim.ComputeBusy(s)))));
                }
            },
        });
        long end = (long)(result.ShuffleReduceSeconds * 1e9);
        return (result, state.Where(s => s.At < end).ToList());
    }

    [Theory]
    [InlineData("root@0.5T")]
    [InlineData("random@0.25T")]
    public void APricedJobRecoversFromAFailureWithTheReferencesOutput(string failure)
    {
        // With the paper's rates the job is reducer-bound; a server's beacons must still go out while its core works.
        using var run = new RecoveryRun(S1R1 with { Settings = S1R1.Settings with { BytesPerServer = 200_000, Compute = ComputeModel.Paper } });
        var result = run.Run(failure);
        Assert.True(result.ShuffleReduceSeconds > run.Baseline.ShuffleReduceSeconds);
        Assert.Single(result.Failures);
    }

    private static string JobPlacement(JobSimulationResult result) => Assert.Single(result.Reducers).Server;
    /// <summary>
    /// A per-frame cost is charged once for every frame any server receives (data, acks and beacons), whatever its
    /// length; it makes the job slower, and the output stays the reference's.
    /// </summary>
    [Fact]
    public void EveryFrameAServerReceivesCostsItsCoreTheFrameCost()
    {
        const long frameNs = 10_000;
        var job = S1R1 with { OutputRatio = 0, Settings = S1R1.Settings with { BytesPerServer = 20_000 } };
        var paper = ComputeModel.Paper;
        Simulation? priced = null;
        var withFrames = JobSimulation.Run(job with
        {
            Settings = job.Settings with { Compute = paper with { Rates = paper.Rates with { FrameNanoseconds = frameNs } } },
            Configure = sim => priced = sim,
        });
        var bytesOnly = JobSimulation.Run(job with { Settings = job.Settings with { Compute = paper } });
        Assert.True(withFrames.Verified, withFrames.VerificationError);
        Assert.True(bytesOnly.Verified, bytesOnly.VerificationError);

        // No loss and no failure: every frame that arrived was received by a server (a torus has no switch).
        long frames = priced!.EventsOf(EventKind.FrameArrival);
        long charged = Enumerable.Range(0, job.Torus.Count).Sum(priced.ComputeFrameBusy);
        Assert.Equal(frames * frameNs, charged);
        Assert.True(withFrames.ShuffleReduceSeconds > bytesOnly.ShuffleReduceSeconds,
            $"{withFrames.ShuffleReduceSeconds} s with a frame cost, {bytesOnly.ShuffleReduceSeconds} s without");
        Assert.Equal(frameNs / 1e3, withFrames.Compute!.FrameMicroseconds);
        Assert.True(withFrames.Compute.BusiestServerFrameSeconds > 0);
        Assert.Equal(0, bytesOnly.Compute!.BusiestServerFrameSeconds);
    }
}
