using Camdoop.Experiments;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Recovery;

/// <summary>
/// Harder cases than one crash: a cable cut in the middle of the shuffle, a second failure of the server that took
/// over a vertex of the first, a server lost as the shuffle starts (its map output with it), and each again with
/// random frame loss. The output is the reference's every time.
/// </summary>
public sealed class FailureScenarioTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    private static JobSimulationOptions Options(ShuffleMode mode, int reducers, double loss) => new()
    {
        Torus = Cube,
        Workload = Workload.Synthetic,
        OutputRatio = 0.5,
        Mode = mode,
        ReduceTasks = reducers,
        Settings = new SimulationSettings { BytesPerServer = 200_000 },
        LossRate = loss,
    };

    public static TheoryData<ShuffleMode, int, double> Cases() => new()
    {
        { ShuffleMode.Camdoop, 1, 0 },
        { ShuffleMode.NoAgg, 1, 0 },
        { ShuffleMode.Camdoop, 27, 0 },
        { ShuffleMode.Camdoop, 1, 0.001 },
        { ShuffleMode.NoAgg, 27, 0.001 },
    };

    /// <summary>The cable from the root's child in tree 0 to the root: the busiest kind, in use until the end.</summary>
    [Theory]
    [MemberData(nameof(Cases))]
    public void ACableCutMidShuffleIsRoutedAround(ShuffleMode mode, int reducers, double loss)
    {
        using var run = new RecoveryRun(Options(mode, reducers, loss));
        var root = run.Placement.Root(0);
        Span<Port> ports = stackalloc Port[Ports.Count];
        Assert.Equal(1, run.Placement.Trees.GetChildPorts(root, root, 0, ports));
        var child = Cube.Neighbour(root, ports[0]);
        var result = run.Run($"link:{child.Name}:{ports[0].Opposite().Name()}@0.5T");
        var failure = Assert.Single(result.Failures);
        Assert.NotNull(failure.DetectedAtSeconds); // both ends lose carrier at once
        Assert.Equal(0, result.Recovery!.VerticesAdopted); // no server was lost: nothing moves, traffic takes other paths
        Assert.Equal(0, result.Recovery.MapTasksRerun);
    }

    /// <summary>
    /// A random server fails; then, right after the failure was detected and the servers took over its vertices, the
    /// server that took over one of them fails too: that vertex moves again and resumes from its parent's last key
    /// once more.
    /// </summary>
    /// <summary>
    /// Two of <see cref="Cases"/>, one per mode and per R, both with loss: each case runs the job three times over a
    /// larger input (about a minute of the whole suite's run); the other three combinations run in this class's other
    /// scenarios.
    /// </summary>
    public static TheoryData<ShuffleMode, int, double> SecondFailureCases() => new()
    {
        { ShuffleMode.Camdoop, 1, 0.001 },
        { ShuffleMode.NoAgg, 27, 0.001 },
    };

    [Theory]
    [MemberData(nameof(SecondFailureCases))]
    public void TheServerThatTookOverAVertexFailingToo(ShuffleMode mode, int reducers, double loss)
    {
        var options = Options(mode, reducers, loss);
        using var run = new RecoveryRun(options with { Settings = options.Settings with { BytesPerServer = 1_000_000 } });
        var first = run.Resolve("random@0.3T");
        var alone = run.Run([first]);
        double detected = alone.Failures[0].DetectedAtSeconds!.Value;
        // The vertex of reduce task 0 in tree 0 on the failed server moves to the owner of its key among the others.
        var view = ServerSet.AllOf(Cube);
        view.Remove(Cube.IndexOf(first.Server));
        var adopter = KeyMapper.Shared(Cube).Owner(run.Placement.VertexKey(first.Server, 0, 0), view);
        long at = (long)(detected * 1e9) + (2 * 1_000_000);
        Assert.True(alone.ShuffleReduceSeconds * 1e9 > at + (5 * 1_000_000), "the job must still be recovering when the second server fails");
        var result = run.Run([first, new InjectedFailure("adopter", adopter, null, at)]);
        Assert.Equal(2, result.Failures.Count);
        Assert.All(result.Failures, f => Assert.NotNull(f.DetectedAtSeconds));
        Assert.True(result.Recovery!.VerticesAdopted > alone.Recovery!.VerticesAdopted,
            $"{result.Recovery.VerticesAdopted} vertices taken over for two failures, {alone.Recovery.VerticesAdopted} for the first alone");
    }

    /// <summary>A server lost as the shuffle starts: its map output is lost with it and its map task runs again elsewhere.</summary>
    [Theory]
    [MemberData(nameof(Cases))]
    public void AServerLostAsTheShuffleStartsHasItsMapTaskRunAgain(ShuffleMode mode, int reducers, double loss)
    {
        using var run = new RecoveryRun(Options(mode, reducers, loss));
        var result = run.Run("random@0ms");
        Assert.True(result.Recovery!.MapTasksRerun >= 1);
        Assert.NotNull(Assert.Single(result.Failures).DetectedAtSeconds);
    }

    /// <summary>
    /// Servers down before the job is submitted take no part: the coordinator gives their chunks to the next replica,
    /// which maps them as its own (no map task runs again: none ran), and the live servers take over their vertices
    /// and roots from the start. The output, checked against the whole input's reference, holds the down server's data.
    /// </summary>
    [Theory]
    [InlineData(ShuffleMode.Camdoop, 1, "root")]
    [InlineData(ShuffleMode.Camdoop, 27, "random")]
    [InlineData(ShuffleMode.NoAgg, 1, "random")]
    public void AJobStartedWhileAServerIsDownRunsOnTheLiveOnes(ShuffleMode mode, int reducers, string what)
    {
        using var run = new RecoveryRun(Options(mode, reducers, 0));
        var result = run.Run($"{what}@start");
        var failure = Assert.Single(result.Failures);
        Assert.True(failure.DetectedAtSeconds < 0, $"detected at {failure.DetectedAtSeconds} s: after the job started");
        Assert.Equal(0, result.Recovery!.MapTasksRerun);
        Assert.True(result.Recovery.VerticesAdopted > 0);
        Assert.True(result.Verified, result.VerificationError);
    }

    /// <summary>The root fails, and so does the server that took its reduce task over, before it finished.</summary>
    [Fact]
    public void TheRootAndThenItsReplacementFailing()
    {
        var options = Options(ShuffleMode.Camdoop, 1, 0);
        using var run = new RecoveryRun(options with { Settings = options.Settings with { BytesPerServer = 1_000_000 } });
        var first = run.Resolve("root@0.5T");
        var alone = run.Run([first]);
        var replacement = alone.Reducers[0].Server;
        long at = (long)(alone.Failures[0].DetectedAtSeconds!.Value * 1e9) + (2 * 1_000_000);
        Assert.True(alone.ShuffleReduceSeconds * 1e9 > at + (5 * 1_000_000), "the replacement must still be working when it fails");
        Assert.True(Coordinate.TryParse(replacement.Trim('(', ')'), out var server));
        var result = run.Run([first, new InjectedFailure("replacement", server, null, at)]);
        Assert.Equal(2, result.Failures.Count);
        Assert.NotEqual(replacement, result.Reducers[0].Server);
    }

    /// <summary>
    /// On 8x8x8 the root fails early: every server starts the reduce task over on new trees, while old segments are still
    /// in flight and while servers learn of the failure at different times. A request to restart a stream of the new
    /// trees can reach a server before it has started them, and a late first segment of an epoch can reach a parent
    /// that asked for the epoch after it; neither may stall the tree.
    /// </summary>
    [Fact]
    public void TheRootLostOnALargeCubeWhileTheNewTreesStartUnevenly()
    {
        var options = Options(ShuffleMode.Camdoop, 1, 0);
        using var run = new RecoveryRun(options with { Settings = options.Settings with { BytesPerServer = 50_000 }, Torus = new Torus(8, 8, 8), OutputRatio = 1 });
        var result = run.Run("root@0.25T");
        Assert.NotEqual(run.Placement.Root(0).Name, result.Reducers[0].Server.Trim('(', ')'));
        Assert.True(result.Recovery!.Regenerations > 0, "vertices regenerated their streams for the new trees");
    }
}
