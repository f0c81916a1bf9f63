using Camdoop.Experiments;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>Where concurrent jobs map and root their reduce tasks, horizontally and vertically partitioned.</summary>
public sealed class ConcurrentPlacementTests
{
    private static JobSimulationOptions Job(Torus torus, int reduceTasks, ulong seed = 1) =>
        new() { Torus = torus, ReduceTasks = reduceTasks, Settings = new SimulationSettings { Seed = seed } };

    [Theory]
    [InlineData("3x3x3", 1, 2)]
    [InlineData("3x3x3", 27, 2)]
    [InlineData("3x3x3", 5, 3)]
    [InlineData("3x3x3", 13, 3)]
    [InlineData("4x4x4", 1, 3)]
    [InlineData("4x4x4", 32, 2)]
    [InlineData("8x8x8", 8, 2)]
    public void HorizontalCopiesRootNoServerMoreThanOnceAboveAnyOther(string size, int reduceTasks, int count)
    {
        var torus = Torus.Parse(size);
        var jobs = ConcurrentPlacement.Copies(Job(torus, reduceTasks), count, JobPartitioning.Horizontal);
        Assert.Equal(count, jobs.Count);
        // The first copy is the job itself, placed as it would be alone.
        Assert.Null(jobs[0].Roots);
        var perServer = new int[torus.Count];
        for (int k = 0; k < count; k++)
        {
            Assert.Null(jobs[k].MapServers);
            Assert.Equal(jobs[0].JobId + (ulong)k, jobs[k].JobId);
            Assert.Equal(jobs[0].Settings.Seed + (ulong)k, jobs[k].Settings.Seed);
            var roots = new JobPlacement(torus, jobs[k].JobId, reduceTasks, roots: jobs[k].Roots).RootIndices;
            Assert.Equal(reduceTasks, roots.Distinct().Count());
            foreach (int root in roots)
            {
                perServer[root]++;
            }
        }
        Assert.True(perServer.Max() - perServer.Min() <= 1, $"roots per server from {perServer.Min()} to {perServer.Max()}");
        if (reduceTasks == 1)
        {
            // Two single reducers as far apart as the cube allows.
            var a = torus.CoordinateOf(new JobPlacement(torus, jobs[0].JobId, 1).RootIndex(0));
            var b = torus.CoordinateOf(jobs[1].Roots![0]);
            Assert.Equal(torus.Diameter, torus.Distance(a, b));
        }
    }

    [Fact]
    public void VerticalCopiesGetDisjointServersFromTheSeedAndRootOnThem()
    {
        var torus = new Torus(3, 3, 3);
        var jobs = ConcurrentPlacement.Copies(Job(torus, 13), 2, JobPartitioning.Vertical);
        var again = ConcurrentPlacement.Copies(Job(torus, 13), 2, JobPartitioning.Vertical);
        var other = ConcurrentPlacement.Copies(Job(torus, 13, seed: 2), 2, JobPartitioning.Vertical);
        Assert.Equal(jobs[0].MapServers, again[0].MapServers);
        Assert.NotEqual(jobs[0].MapServers, other[0].MapServers);
        // The paper's "thirteen servers each", one server left over.
        Assert.Equal(13, jobs[0].MapServers!.Count);
        Assert.Equal(13, jobs[1].MapServers!.Count);
        Assert.Empty(jobs[0].MapServers!.Intersect(jobs[1].MapServers!));
        foreach (var job in jobs)
        {
            Assert.Equal(job.MapServers!.Order(), job.Roots!.Order());
        }

        var listed = ConcurrentPlacement.Vertical([Job(torus, 2), Job(torus, 1) with { JobId = 9 }], [[0, 1, 2], [26]]);
        Assert.Equal([0, 1, 2], listed[0].MapServers);
        Assert.All(listed[0].Roots!, r => Assert.Contains(r, new[] { 0, 1, 2 }));
        Assert.Equal([26], listed[1].Roots);
        Assert.Throws<ArgumentException>(() => ConcurrentPlacement.Vertical([Job(torus, 1), Job(torus, 1)], [[0, 1], [1]]));
        Assert.Throws<ArgumentException>(() => ConcurrentPlacement.Vertical([Job(torus, 3), Job(torus, 1)], [[0, 1], [2]]));
        Assert.Throws<ArgumentException>(() => ConcurrentPlacement.Copies(Job(torus, 1), 2, JobPartitioning.Vertical, serversPerJob: 14));
    }
}
