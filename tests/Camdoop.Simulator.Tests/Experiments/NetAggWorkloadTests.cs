using Camdoop.Experiments;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.DirectShuffle.Plans;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// The NetAgg paper's workload: drawn with the paper's shape (flow count, aggregatable share, worker counts, Pareto
/// sizes), run at once under every design with every request's and flow's output equal to the single-process
/// reference, and a flow outside the aggregation passing the agg boxes by.
/// </summary>
public sealed class NetAggWorkloadTests
{
    private static readonly Torus Cube512 = new(8, 8, 8);

    [Fact]
    public void EachDrawHasThePapersFlowCountAndAggregatableShareAndNoServerSendsTwoFlows()
    {
        for (ulong seed = 1; seed <= 20; seed++)
        {
            var groups = NetAggWorkload.Generate(new NetAggWorkloadOptions { Torus = Cube512, Seed = seed });
            // 15 % of 512 servers send a flow; 46 % of those 77 flows are aggregatable (one may be left over as
            // background when the last request would have had a single worker).
            Assert.Equal(77, groups.Sum(g => g.Workers.Count));
            int aggregatable = groups.Where(g => g.Aggregatable).Sum(g => g.Workers.Count);
            Assert.InRange(aggregatable, 34, 35);
            var senders = groups.SelectMany(g => g.Workers).ToList();
            Assert.Equal(senders.Count, senders.Distinct().Count());
            Assert.All(groups, g =>
            {
                Assert.DoesNotContain(g.Reducer, g.Workers);
                Assert.Equal(g.Aggregatable, g.Workers.Count >= 2);
                Assert.Equal(g.Aggregatable ? Math.Max(0.1, 1.0 / g.Workers.Count) : 1, g.OutputRatio, 9);
                Assert.InRange(g.BytesPerWorker, 1, 64L * 1024 * 1024);
            });
        }
    }

    [Fact]
    public void SixtyOnePercentOfRequestsHaveFewerThanTenWorkers()
    {
        double exponent = NetAggWorkload.PowerLawExponent(100, 0.61);
        Assert.Equal(0.61, NetAggWorkload.FewShare(exponent, 100), 6);
        // Drawn: requests on a large cube with every flow aggregatable, so that no request is cut short.
        var torus = new Torus(16, 16, 16);
        var groups = Enumerable.Range(1, 6).SelectMany(s => NetAggWorkload.Generate(new NetAggWorkloadOptions
        {
            Torus = torus,
            EdgeLoad = 1,
            AggregatableShare = 1,
            Seed = (ulong)s,
        }).SkipLast(1)).ToList(); // the last request of each draw is cut to the flows left
        Assert.True(groups.Count > 1000, $"only {groups.Count} requests");
        double few = groups.Count(g => g.Workers.Count < 10) / (double)groups.Count;
        Assert.InRange(few, 0.57, 0.65);
        Assert.All(groups, g => Assert.InRange(g.Workers.Count, 2, 100));
    }

    [Fact]
    public void FlowSizesArePareto()
    {
        // Pareto with shape a and mean m has scale m (a - 1) / a and median scale 2^(1/a): 9,215 bytes here.
        var options = new NetAggWorkloadOptions { Torus = Cube512, MaxFlowBytes = long.MaxValue / 4 };
        var random = new DeterministicRandom(7, 1);
        var sizes = Enumerable.Range(0, 200_000).Select(_ => NetAggWorkload.DrawFlowBytes(random, options)).Order().ToList();
        double scale = 100_000 * 0.05 / 1.05;
        Assert.InRange(sizes[0], scale - 1, scale * 1.01);
        Assert.InRange(sizes[sizes.Count / 2], scale * Math.Pow(2, 1 / 1.05) * 0.97, scale * Math.Pow(2, 1 / 1.05) * 1.03);
        // P(X > 10 scale) = 10^-a.
        double tail = sizes.Count(s => s > 10 * scale) / (double)sizes.Count;
        Assert.InRange(tail, Math.Pow(10, -1.05) * 0.95, Math.Pow(10, -1.05) * 1.05);
    }

    [Fact]
    public void EveryDesignDeliversEveryRequestAndFlowExactly()
    {
        var options = new NetAggWorkloadSweepOptions
        {
            Workload = new NetAggWorkloadOptions
            {
                Torus = new Torus(4, 4, 4),
                EdgeLoad = 0.5,
                MeanFlowBytes = 10_000,
                MaxFlowBytes = 100_000,
                Seed = 3,
            },
            Trials = 1,
            Verify = true,
            Racks = new SwitchedNetworkOptions { Kind = NetworkKind.Racks, RackSize = 16 },
        };
        var rows = NetAggWorkloadSweep.Run(options);
        var groups = NetAggWorkload.Generate(options.Workload);
        Assert.Equal(4 * groups.Count, rows.Count);
        Assert.Contains(groups, g => g.Aggregatable);
        Assert.Contains(groups, g => !g.Aggregatable);
        Assert.All(rows, r =>
        {
            Assert.True(r.Verified == true, $"{r.Design}: group {r.Group} differs from the reference");
            Assert.True(r.Seconds > 0, $"{r.Design}: group {r.Group} took no time");
        });
        // The same inputs under every design: the same intermediate bytes and outputs.
        foreach (var g in groups)
        {
            var mine = rows.Where(r => r.Group == g.Index).ToList();
            Assert.Single(mine.Select(r => (r.IntermediateBytes, r.OutputBytes)).Distinct());
        }
        var summaries = NetAggWorkloadSweep.Summarize(rows);
        Assert.Equal(["rack", "binary", "chain", "netagg"], summaries.Select(s => s.Design));
        Assert.Equal(1.0, summaries[0].P99OverRack);
        Assert.All(summaries, s => Assert.Equal(32, s.Flows));
    }

    [Fact]
    public void AFlowOutsideTheAggregationPassesTheBoxesBy()
    {
        var options = NetAggJobTests.Options(new Torus(3, 3, 3), 9) with { ReduceTasks = 1 };
        var aggregated = JobSimulation.Run(options);
        var past = JobSimulation.Run(options with { Aggregated = false });
        StreamShuffleResults.AssertExact(aggregated, 1);
        StreamShuffleResults.AssertExact(past, 1);
        Assert.Contains(aggregated.AggBoxes!, b => b.MergedBytes > 0);
        Assert.All(past.AggBoxes!, b => Assert.Equal(0, b.MergedBytes));
    }

    [Theory]
    [InlineData(Aggregation.Chain)]
    [InlineData(Aggregation.Binary)]
    [InlineData(Aggregation.Rack)]
    public void ARequestOnSomeServersAggregatesOverItsOwnServersOnly(Aggregation aggregation)
    {
        // Three workers of 64 servers and a reducer in the other rack: a chain or tree of those four, not of all 64.
        var result = JobSimulation.Run(new JobSimulationOptions
        {
            Torus = new Torus(4, 4, 4),
            Mode = MapReduce.Jobs.Control.ShuffleMode.Tcp,
            Network = new SwitchedNetworkOptions { Kind = NetworkKind.Racks },
            Aggregation = aggregation,
            Workload = Workload.Synthetic,
            OutputRatio = 0.5,
            MapServers = [3, 4, 5],
            Roots = [50],
            Settings = new SimulationSettings { BytesPerServer = 20_000, Verify = true },
            MapParallelism = 1,
        });
        StreamShuffleResults.AssertExact(result, 1);
        // A stream and its admission per worker: 6 connections at most (126 when the plan spanned all 64 servers).
        Assert.InRange(result.Tcp!.Connections, 1, 6);
    }

    [Fact]
    public void TheSweepWritesItsTablesAndChart()
    {
        string dir = Path.Combine(Path.GetTempPath(), $"camdoop-netagg-fct-{Environment.ProcessId}");
        try
        {
            var rows = new List<FlowCompletion>
            {
                new("rack", 0, 0, true, 3, 1000, 3000, 300, 0.5, true),
                new("rack", 0, 1, false, 1, 1000, 1000, 1000, 0.1, true),
                new("netagg", 0, 0, true, 3, 1000, 3000, 300, 0.2, true),
                new("netagg", 0, 1, false, 1, 1000, 1000, 1000, 0.1, true),
            };
            var summaries = NetAggWorkloadSweep.Summarize(rows);
            // Four flows each: the 99th percentile is the slowest, the median the second fastest.
            Assert.Equal(0.5, summaries[0].P99Seconds);
            Assert.Equal(0.5, summaries[0].MedianSeconds);
            Assert.Equal(0.4, summaries[1].P99OverRack!.Value, 9);
            var written = NetAggWorkloadSweep.Write(dir, rows, summaries, "test cube");
            Assert.Contains(written, p => p.EndsWith("netagg-fct.svg", StringComparison.Ordinal));
            Assert.Equal(5, File.ReadAllLines(Path.Combine(dir, "netagg-fct.csv")).Length);
            // --chart-only reads the rows back as they were.
            Assert.Equal(rows, NetAggWorkloadSweep.ReadCsv(Path.Combine(dir, "netagg-fct.csv")));
            string summary = File.ReadAllText(Path.Combine(dir, "netagg-fct-summary.csv"));
            Assert.Contains("netagg,4,", summary, StringComparison.Ordinal);
            Assert.Contains("<svg", File.ReadAllText(Path.Combine(dir, "netagg-fct.svg")), StringComparison.Ordinal);
        }
        finally
        {
            if (Directory.Exists(dir))
            {
                Directory.Delete(dir, recursive: true);
            }
        }
    }
}
