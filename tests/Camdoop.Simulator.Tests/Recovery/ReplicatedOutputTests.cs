using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Recovery;

/// <summary>
/// With replicated output, a reduce task whose root fails goes on from the replica its root kept on the server the
/// task starts over on: the output is still exactly the reference's, and the new root is sent only what comes after
/// the replica's last key, so far less is sent again than when the task starts over from the beginning.
/// </summary>
public sealed class ReplicatedOutputTests
{
    public static TheoryData<Workload, double, ShuffleMode, bool> Jobs() => new()
    {
        { Workload.Synthetic, 1.0, ShuffleMode.Camdoop, false },
        { Workload.Synthetic, 0.5, ShuffleMode.NoAgg, false },
        { Workload.Sort, 1.0, ShuffleMode.Camdoop, true },
    };

    [Theory]
    [MemberData(nameof(Jobs))]
    public void ARootFailureGoesOnFromTheReplica(Workload workload, double s, ShuffleMode mode, bool reducerPerServer)
    {
        var cube = new Torus(3, 3, 3);
        var options = new JobSimulationOptions
        {
            Torus = cube,
            Workload = workload,
            OutputRatio = s,
            Mode = mode,
            ReduceTasks = reducerPerServer ? cube.Count : 1,
            // Large enough that what every stream of the new trees sends before the new root's request reaches it (two
            // segments each) is small beside the job.
            Settings = new SimulationSettings { BytesPerServer = 1_000_000 },
        };
        using var plain = new RecoveryRun(options);
        using var replicated = new RecoveryRun(options with { ReplicateOutput = true });
        Assert.True(replicated.Baseline.ShuffleReduceSeconds >= plain.Baseline.ShuffleReduceSeconds * 0.95,
            "replicating the output cannot make the job faster");
        foreach (string at in new[] { "0.75T" })
        {
            var without = plain.Run($"root@{at}");
            var with = replicated.Run($"root@{at}");
            Assert.Equal(without.Failures[0].Server, with.Failures[0].Server);
            // Shuffle bytes the failure added to each job's failure-free run.
            long addedWithout = without.DataBytesSent - plain.Baseline.DataBytesSent;
            long addedWith = with.DataBytesSent - replicated.Baseline.DataBytesSent;
            Assert.True(addedWith < addedWithout / 2,
                $"root@{at}: the failure added {addedWith} bytes with the replica, {addedWithout} without");
        }
    }

    [Theory]
    [InlineData("0.25T")]
    [InlineData("0.75T")]
    public void WordCountsRootFailingGivesTheReferenceOutput(string at)
    {
        // A small job: the failure is detected after the rest of the cube has sent everything, and the new trees
        // start from the replica's last key.
        using var run = new RecoveryRun(new JobSimulationOptions
        {
            Torus = new Torus(3, 3, 3),
            Workload = Workload.WordCount,
            ReduceTasks = 1,
            Settings = new SimulationSettings { BytesPerServer = 150_000 },
            ReplicateOutput = true,
        });
        Assert.Single(run.Run($"root@{at}").Failures);
    }

    [Fact]
    public void MapOutputsOnDiskGoOnFromTheReplicaToo()
    {
        // As on a cube: a leaf's run is read from disk into the stream's own buffer, so asked for the records after a
        // key beyond what it has read, it must read again from the key rather than claim to replay kept bytes.
        using var run = new RecoveryRun(new JobSimulationOptions
        {
            Torus = new Torus(3, 3, 3),
            Workload = Workload.Sort,
            ReduceTasks = 1,
            Settings = new SimulationSettings { BytesPerServer = 200_000 },
            MapOutputOnDisk = true,
            ReplicateOutput = true,
        });
        Assert.Single(run.Run("root@0.5T").Failures);
    }

    [Fact]
    public void TheReplicasServerFailingLeavesTheRootToGoOnAlone()
    {
        var cube = new Torus(3, 3, 3);
        using var run = new RecoveryRun(new JobSimulationOptions
        {
            Torus = cube,
            Workload = Workload.Synthetic,
            OutputRatio = 1,
            ReduceTasks = 1,
            Settings = new SimulationSettings { BytesPerServer = 150_000 },
            ReplicateOutput = true,
        });
        var placement = run.Placement;
        var root = placement.Root(0);
        var replica = placement.NextRoot(0, 1, root, Camdoop.KeyRouting.ServerSet.AllOf(cube));
        var result = run.Run($"{replica.X},{replica.Y},{replica.Z}@0.25T", "root@0.6T");
        Assert.Equal(2, result.Failures.Count);
    }

    [Fact]
    public void TheRootThatWentOnFromTheReplicaFailingToo()
    {
        var cube = new Torus(3, 3, 3);
        using var run = new RecoveryRun(new JobSimulationOptions
        {
            Torus = cube,
            Workload = Workload.Synthetic,
            OutputRatio = 1,
            ReduceTasks = 1,
            // A shuffle long enough for the second failure to strike after the first is handled.
            Settings = new SimulationSettings { BytesPerServer = 1_000_000 },
            ReplicateOutput = true,
        });
        var root = run.Placement.Root(0);
        var view = Camdoop.KeyRouting.ServerSet.AllOf(cube);
        view.Remove(cube.IndexOf(root));
        var next = run.Placement.NextRoot(0, 1, root, view);
        var result = run.Run("root@0.3T", $"{next.X},{next.Y},{next.Z}@0.7T");
        Assert.Equal(2, result.Failures.Count);
    }
}
