using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Recovery;

/// <summary>
/// The server a job was submitted to, its coordinator, fails: while the servers map, as the shuffle starts, in the
/// middle of the shuffle, and while the last reduce task finishes. The next owner of the job's control key holds a
/// copy of the job's state and takes the job over; the servers report to it, and the output is the reference's every
/// time. On the torus the shuffle recovers the lost server's part; TCP Camdoop starts over on the servers left.
/// </summary>
public sealed class CoordinatorFailureTests
{
    private static readonly Torus Cube = new(3, 3, 3);

    public static TheoryData<ShuffleMode, int, string> TorusCases()
    {
        var cases = new TheoryData<ShuffleMode, int, string>();
        foreach (var (mode, reducers) in new[] { (ShuffleMode.Camdoop, 1), (ShuffleMode.NoAgg, 1), (ShuffleMode.Camdoop, 27), (ShuffleMode.NoAgg, 27) })
        {
            foreach (string when in new[] { "map", "0ms", "0.5T", "0.97T" })
            {
                cases.Add(mode, reducers, when);
            }
        }
        return cases;
    }

    [Theory]
    [MemberData(nameof(TorusCases))]
    public void OnTheTorusTheNextOwnerTakesTheJobOverAndItsOutputIsExact(ShuffleMode mode, int reducers, string when)
    {
        using var run = new RecoveryRun(new JobSimulationOptions
        {
            Torus = Cube,
            Workload = Workload.WordCount,
            Mode = mode,
            ReduceTasks = reducers,
            Settings = new SimulationSettings { BytesPerServer = 100_000 },
        });
        var result = run.Run($"coordinator@{when}");
        var failure = Assert.Single(result.Failures);
        Assert.Equal(result.Coordinator, $"({failure.Server})");
        Assert.True(result.Takeovers >= 1, "no server took the job over");
        Assert.NotNull(failure.DetectedAtSeconds);
    }

    public static TheoryData<int, string> TcpCases()
    {
        var cases = new TheoryData<int, string>();
        foreach (int reducers in new[] { 1, 27 })
        {
            foreach (string when in new[] { "map", "0ms", "0.5T", "0.97T" })
            {
                cases.Add(reducers, when);
            }
        }
        return cases;
    }

    /// <summary>
    /// TCP Camdoop has no recovery of a lost server's streams: the job's new coordinator starts it over on the servers
    /// left, the lost coordinator's chunks mapped at their next replicas (unless every reduce task had already written
    /// its output elsewhere).
    /// </summary>
    [Theory]
    [MemberData(nameof(TcpCases))]
    public void TcpCamdoopStartsOverOnTheServersLeftAndItsOutputIsExact(int reducers, string when)
    {
        using var run = new RecoveryRun(new JobSimulationOptions
        {
            Torus = Cube,
            Workload = Workload.WordCount,
            Mode = ShuffleMode.Tcp,
            Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch, PortBufferBytes = 8 << 20 },
            ReduceTasks = reducers,
            Settings = new SimulationSettings { BytesPerServer = 100_000 },
        });
        var result = run.Run($"coordinator@{when}");
        Assert.Equal(result.Coordinator, $"({Assert.Single(result.Failures).Server})");
        Assert.True(result.Takeovers >= 1, "no server took the job over");
        Assert.True(result.Attempts >= 1 || result.Reducers.All(r => r.Server != result.Coordinator),
            $"the job did not start over though the lost coordinator {result.Coordinator} rooted a reduce task");
    }

    [Fact]
    public void TcpCamdoopWithTheDefaultTimeoutsAlsoRecoversFromAnyServer()
    {
        using var run = new RecoveryRun(new JobSimulationOptions
        {
            Torus = Cube,
            Workload = Workload.Synthetic,
            OutputRatio = 0.5,
            Mode = ShuffleMode.Tcp,
            Network = new SwitchedNetworkOptions { Kind = NetworkKind.Racks, RackSize = 9, PortBufferBytes = 8 << 20 },
            Tcp = new TcpOptions(),
            ReduceTasks = 3,
            Settings = new SimulationSettings { BytesPerServer = 100_000 },
        });
        // Lost as the shuffle starts: none of its streams arrives, so the reducers cannot finish without starting over.
        var result = run.Run("random@0ms");
        Assert.Equal(1, result.Attempts);
    }
}
