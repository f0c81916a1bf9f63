using Camdoop.Experiments;
using Camdoop.MapReduce.Trees;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// Why the aggregated bytes of Figure 7's R = 1, S = 0 run spread 8 % below the median (docs/performance.md): six
/// spanning trees have 6(N - 1) edges, so six child slots are missing, and they fall on the root's six neighbours.
/// </summary>
public sealed class AggregatedBytesTests
{
    [Theory]
    [InlineData("shallow")]
    [InlineData("paper")]
    public void AtS0AndR1OnlyTheRootsNeighboursTakeInLessThanTheOthers(string trees)
    {
        var torus = new Torus(3, 3, 3);
        var perServer = new List<(Coordinate Server, long Aggregated, int Children)>();
        var result = JobSimulation.Run(new JobSimulationOptions
        {
            Torus = torus,
            Workload = Workload.Synthetic,
            OutputRatio = 0,
            Settings = new SimulationSettings
            {
                BytesPerServer = 2_000_000, // enough keys that the six stripes are within a fraction of a percent of each other
                Trees = TreeFamilyNames.All[trees],
            },
            ReduceTasks = 1,
            Inspect = (_, services, jobs) =>
            {
                for (int i = 0; i < services.Count; i++)
                {
                    var job = jobs[i]!;
                    int children = job.Vertices.Sum(v => v.Children.Count) + job.RootReducers.Sum(r => r.Children.Count);
                    perServer.Add((torus.CoordinateOf(i), job.AggregatedBytes, children));
                }
            },
        });
        Assert.True(result.Completed);
        string rootName = result.Reducers.Single().Server!;
        var root = perServer.Single(s => s.Server.ToString() == rootName).Server;
        var neighbours = Enum.GetValues<Port>().Select(p => torus.Neighbour(root, p)).ToHashSet();
        Assert.Equal(6, neighbours.Count);
        // The children over a server's six vertices add up to 6(N - 1): six short, one on each root neighbour.
        Assert.Equal(6 * (torus.Count - 1), perServer.Sum(s => s.Children));
        Assert.All(perServer, s => Assert.Equal(neighbours.Contains(s.Server) ? 5 : 6, s.Children));
        double median = perServer.Select(s => (double)s.Aggregated).Order().ElementAt(perServer.Count / 2);
        foreach (var (server, aggregated, _) in perServer)
        {
            double off = (aggregated / median) - 1;
            if (neighbours.Contains(server))
            {
                Assert.InRange(off, -1.0 / 12 - 0.02, -1.0 / 12 + 0.02); // 11 stripes of the median's 12
            }
            else
            {
                Assert.InRange(off, -0.01, 0.01);
            }
        }
    }
}
