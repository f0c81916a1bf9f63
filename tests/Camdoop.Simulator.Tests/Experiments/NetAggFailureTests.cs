using Camdoop.Experiments;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// An agg box of NetAgg fails in the middle of the shuffle: its children re-parent to the next box on the path (or
/// the reducer) and send their streams again; the new parent drops what it had already merged from the failed box.
/// The output must still equal the single-process reference over the same input, and the run take longer.
/// </summary>
public sealed class NetAggFailureTests
{
    public static TheoryData<string, string, Workload, bool> Matrix() => new()
    {
        { "3x3x3", "box@rack0", Workload.WordCount, false },
        { "3x3x3", "box@core", Workload.Sort, true },
        { "4x4x4", "box@core", Workload.WordCount, false },
        { "4x4x4", "box@rack1", Workload.Sort, false },
        { "3x3x3", "box@rack2", Workload.WordCount, true },
        { "4x4x4", "box@rack0", Workload.Synthetic, true },
    };

    /// <summary>Racks of 9 (27 servers: three racks and a core) or 24 (64: three racks); R = 1 or R = N; the box fails at 0.25T.</summary>
    [Theory]
    [MemberData(nameof(Matrix))]
    public void ABoxFailedMidShuffleLeavesTheOutputExact(string torus, string box, Workload workload, bool everyServer)
    {
        var cube = Torus.Parse(torus);
        int reduceTasks = everyServer ? cube.Count : 1;
        var racks = NetAggJobTests.Options(cube, cube.Count == 27 ? 9 : 24);
        var options = racks with
        {
            // Switch buffers that hold every window: no loss, so no retransmission timeout blurs the failure's cost.
            Network = racks.Network! with { PortBufferBytes = 8 << 20 },
            Workload = workload,
            Settings = racks.Settings with
            {
                // R = 1: enough that a rack's stream is still on its way at 0.25T (a short one has left its box by then).
                BytesPerServer = (workload == Workload.Sort ? 6_000 : 10_000) * (everyServer ? 1 : 6),
                Seed = (ulong)reduceTasks + 11,
            },
            ReduceTasks = reduceTasks,
        };
        var input = JobSimulationInput.Prepare(options, keepInputs: true);
        var baseline = JobSimulation.Run(options, input);
        StreamShuffleResults.AssertExact(baseline, reduceTasks);

        var failure = FailureRequest.Parse($"{box}@0.25T").Resolve(cube, new JobPlacement(cube, options.JobId, reduceTasks, options.Settings.Trees),
            (int)options.Settings.Seed, (long)Math.Round(baseline.ShuffleReduceSeconds * 1e9), NetAggLayout.For(options.Network!, cube.Count));
        var result = JobSimulation.Run(options with { Failures = [failure] }, input);

        StreamShuffleResults.AssertExact(result, reduceTasks);
        var failed = Assert.Single(result.AggBoxes!, b => b.Failed);
        Assert.Equal(box, failed.Name);
        var report = Assert.Single(result.Failures);
        Assert.Equal(box, report.What);
        Assert.True(report.DetectedAtSeconds > report.AtSeconds, "detected after the crash");
        Assert.True(result.Recovery!.ResentBytes > 0, "the failed box's children sent their streams again");
        Assert.True(result.ShuffleReduceSeconds > baseline.ShuffleReduceSeconds,
            $"with the failure {result.ShuffleReduceSeconds} s, without {baseline.ShuffleReduceSeconds} s");
        // The failure-free run's output and the failed run's are the same records.
        Assert.Equal(baseline.OutputRecords, result.OutputRecords);
    }

    [Fact]
    public void ABoxOfAnotherNetworkIsRefused()
    {
        var cube = new Torus(3, 3, 3);
        var options = NetAggJobTests.Options(cube, 9);
        var request = FailureRequest.Parse("box@rack7@1ms");
        Assert.True(request.IsAggBox);
        var e = Assert.Throws<FormatException>(() => request.Resolve(cube, new JobPlacement(cube, options.JobId, 1, options.Settings.Trees), 1, null,
            NetAggLayout.For(options.Network!, cube.Count)));
        Assert.Contains("box@rack0, box@rack1, box@rack2, box@core", e.Message, StringComparison.Ordinal);
        Assert.Throws<FormatException>(() => request.Resolve(cube, new JobPlacement(cube, options.JobId, 1, options.Settings.Trees), 1, null));
    }
}
