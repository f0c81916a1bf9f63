using Camdoop.Experiments;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

public sealed class FailureSweepTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-failure-sweep-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public void Figure9OnTheTestbedCubeRecoversEveryFailureWithTheReferenceOutput()
    {
        var torus = new Torus(3, 3, 3);
        var progress = new List<SweepProgress>();
        var rows = FailureSweep.Run(torus, new FailureSweepOptions { Settings = new SimulationSettings { BytesPerServer = 300_000, Verify = true }, Fractions = [0.5], Parallelism = 2 },
            new SynchronousProgress<SweepProgress>(progress.Add));

        // R = 1: root, a neighbour of it, a random server; R = 27: a random server.
        Assert.Equal(["root", "root-neighbour", "random", "random"], rows.Select(r => r.Failed));
        Assert.Equal([1, 1, 1, 27], rows.Select(r => r.ReduceTasks));
        Assert.Equal(rows.Count + 2, progress.Max(p => p.Done)); // every failure run and both baselines
        Assert.All(progress, p => Assert.Equal(rows.Count + 2, p.Total));
        Assert.All(rows, r => Assert.True(r.Completed && r.Verified == true, $"{r.Failed} at R={r.ReduceTasks}"));
        Assert.All(rows, r => Assert.True(r.DetectionSeconds > 0, "a failure is noticed by missing beacons, after it happens"));
        Assert.All(rows, r => Assert.Equal(r.BaselineSeconds * r.Stretch, r.ShuffleReduceSeconds, 9));

        // Losing the root loses everything it aggregated: the reduce task starts over, so the job ends later than losing
        // a random server, whose vertices' parents resume from the last key they hold; and after the failure it has to
        // move the whole job's data again, which took T the first time.
        var root = rows[0];
        var random = rows[2];
        Assert.True(root.Stretch > random.Stretch, $"root {root.Stretch} vs random {random.Stretch}");
        Assert.True(root.ResentBytes > random.ResentBytes);
        Assert.True(root.Stretch > 1.5, $"root failed at 0.5T, yet the stretch is {root.Stretch}");
        Assert.True(rows.All(r => r.MapTasksRerun >= 1), "the failed server's map task runs again elsewhere");

        string csv = Path.Combine(_directory, "figure9.csv");
        FailureSweep.ToCsv(rows).Save(csv);
        var lines = File.ReadAllLines(csv);
        Assert.Equal(5, lines.Length);
        Assert.StartsWith("R,failed,server,at,baseline_s,shuffle_reduce_s,stretch", lines[0], StringComparison.Ordinal);
        string svg = FailureSweep.Chart(rows, torus).RenderSvg();
        Assert.Contains("R=1, root-neighbour", svg, StringComparison.Ordinal);
        Assert.Contains("paper: R=1, root (testbed)", svg, StringComparison.Ordinal);
    }
}
