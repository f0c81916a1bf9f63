using Camdoop.Experiments;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.DirectShuffle.Plans;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// Edge-based aggregation in the stream shuffle (mode tcp): the servers merge and combine among themselves on the way
/// to the reducer (within each rack first, a binary tree, a chain), with the same merge code as the reducer. Every
/// output must equal the single-process reference MapReduce over the same input; the plans must be trees rooted at
/// the reducer; rack aggregation of a combining job must spare the oversubscribed core.
/// </summary>
public sealed class EdgeAggregationTests
{
    public static TheoryData<Aggregation, string, Workload, string?, bool> Matrix()
    {
        var data = new TheoryData<Aggregation, string, Workload, string?, bool>();
        foreach (var aggregation in new[] { Aggregation.Rack, Aggregation.Binary, Aggregation.Chain })
        {
            foreach (string torus in new[] { "3x3x3", "4x4x4" })
            {
                foreach (var (workload, job) in new (Workload, string?)[]
                {
                    (Workload.WordCount, null), (Workload.Sort, null), (Workload.Synthetic, null), (Workload.TopK, "topk?k=15"),
                    (Workload.TopK, "median"),
                })
                {
                    foreach (bool everyServer in new[] { false, true })
                    {
                        data.Add(aggregation, torus, workload, job, everyServer);
                    }
                }
            }
        }
        return data;
    }

    /// <summary>R = 1, or R = N (<paramref name="everyServer"/>), on racks of 8 servers: several racks and a partial one.</summary>
    [Theory]
    [MemberData(nameof(Matrix))]
    public void OutputEqualsTheReference(Aggregation aggregation, string torus, Workload workload, string? job, bool everyServer)
    {
        var cube = Torus.Parse(torus);
        int reduceTasks = everyServer ? cube.Count : 1;
        var options = Options(cube, NetworkKind.Racks, aggregation, rackSize: 8);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = workload == Workload.Sort ? 2_000 : 3_000, Seed = (ulong)(reduceTasks * 5) + 1 },
            Workload = workload,
            Job = job,
            ReduceTasks = reduceTasks,
        });
        StreamShuffleResults.AssertExact(result, reduceTasks);
        Assert.Equal(aggregation.Name(), result.Aggregation);
        // Every server but the root has at least one interior vertex in a chain or binary tree; a rack plan has one per other rack.
        Assert.True(result.MergedBytes > 0);
    }

    /// <summary>
    /// Two trees per reduce task, each carrying half the key stripes: every server opens one stream per tree and the
    /// output is still exact, directly to the reducer and up binary trees.
    /// </summary>
    [Theory]
    [InlineData(Aggregation.Direct)]
    [InlineData(Aggregation.Binary)]
    public void TwoTreesPerReduceTaskGiveTheReference(Aggregation aggregation)
    {
        var cube = new Torus(3, 3, 3);
        var options = Options(cube, NetworkKind.Switch, aggregation);
        var result = JobSimulation.Run(options with
        {
            Settings = options.Settings with { BytesPerServer = 4_000 },
            Workload = Workload.WordCount,
            ReduceTasks = 1,
            AggregationTrees = 2,
        });
        StreamShuffleResults.AssertExact(result, 1);
        // One stream per server and tree, the root's excepted, whatever the tree's shape; and one admission of each.
        Assert.Equal(2 * 2 * (cube.Count - 1), result.Tcp!.Connections);
    }

    /// <summary>Sort is only merged on the way: each interior vertex forwards exactly what it took in. WordCount is combined: less.</summary>
    [Fact]
    public void InteriorVerticesForwardWhatTheyMergedLessWhatTheyCombined()
    {
        var cube = new Torus(3, 3, 3);
        var chain = Options(cube, NetworkKind.Switch, Aggregation.Chain);
        var sort = JobSimulation.Run(chain with { Settings = chain.Settings with { BytesPerServer = 2_000 }, Workload = Workload.Sort });
        StreamShuffleResults.AssertExact(sort, 1);
        Assert.True(sort.MergedBytes > 0);
        Assert.Equal(sort.MergedBytes, sort.ForwardedBytes);
        var words = JobSimulation.Run(chain with { Settings = chain.Settings with { BytesPerServer = 4_000 }, Workload = Workload.WordCount });
        StreamShuffleResults.AssertExact(words, 1);
        Assert.True(words.ForwardedBytes < words.MergedBytes);
    }

    /// <summary>With S = 1/N every rack's streams fold into one small stream before the core: fewer core bytes than direct.</summary>
    [Fact]
    public void RackAggregationOfACombiningJobMovesFewerBytesOverTheCore()
    {
        var cube = new Torus(4, 4, 4);
        JobSimulationResult Run(Aggregation aggregation)
        {
            var options = Options(cube, NetworkKind.Racks, aggregation, rackSize: 16);
            return JobSimulation.Run(options with
            {
                Settings = options.Settings with { BytesPerServer = 8_000 },
                Workload = Workload.Synthetic,
                OutputRatio = 0,
                ReduceTasks = 1,
            });
        }
        var direct = Run(Aggregation.Direct);
        var rack = Run(Aggregation.Rack);
        StreamShuffleResults.AssertExact(direct, 1);
        StreamShuffleResults.AssertExact(rack, 1);
        Assert.True(direct.CoreLinkBytes > 0);
        Assert.True(rack.CoreLinkBytes < direct.CoreLinkBytes, $"rack {rack.CoreLinkBytes} B, direct {direct.CoreLinkBytes} B over the core");
    }

    /// <summary>
    /// A rack is what shares a switch: on one switch it is every server, so rack aggregation is the direct shuffle (no
    /// server merges on the way); on a fat tree it is the servers under one edge switch (3 on 27 servers), which do;
    /// GRIN's cables change no rack, so its racks aggregate as the racks network's do.
    /// </summary>
    [Theory]
    [InlineData(NetworkKind.Switch, 40, false)]
    [InlineData(NetworkKind.FatTree, 40, true)]
    [InlineData(NetworkKind.Grin, 9, true)]
    public void RackAggregationFollowsTheSwitchesServersShare(NetworkKind network, int rackSize, bool mergesOnTheWay)
    {
        var options = Options(new Torus(3, 3, 3), network, Aggregation.Rack, rackSize);
        var result = JobSimulation.Run(options with
        {
            Network = options.Network! with { FreePorts = network == NetworkKind.Grin ? 2 : 0 },
            Workload = Workload.WordCount,
            Settings = options.Settings with { BytesPerServer = 4_000 },
            ReduceTasks = 2,
        });
        StreamShuffleResults.AssertExact(result, 2);
        Assert.Equal(mergesOnTheWay, result.MergedBytes > 0);
    }

    [Fact]
    public void AnAggregationNeedsModeTcp()
    {
        var options = new JobSimulationOptions { Torus = new Torus(3, 3, 3), Aggregation = Aggregation.Rack };
        var error = Assert.Throws<ArgumentException>(options.Validate);
        Assert.Contains("tcp", error.Message, StringComparison.Ordinal);
    }

    /// <summary>
    /// On odd sizes, racks and tree counts: from every server the parents lead to the reduce task's root without a
    /// cycle, the root has no parent, and each node's children count is the number of nodes naming it as parent.
    /// </summary>
    [Theory]
    [InlineData(1, 1)]
    [InlineData(2, 40)]
    [InlineData(7, 3)]
    [InlineData(27, 8)]
    [InlineData(45, 40)]
    [InlineData(63, 10)]
    public void PlansAreTreesRootedAtTheReducer(int servers, int rackSize)
    {
        var roots = Enumerable.Range(0, servers).Select(r => (r * 5 + 3) % servers).Distinct().ToList();
        foreach (var aggregation in Enum.GetValues<Aggregation>())
        {
            foreach (int trees in new[] { 1, 3 })
            {
                var plan = aggregation.Plan(servers, rackSize, roots, trees);
                Assert.Equal(trees, plan.Trees);
                for (int r = 0; r < roots.Count; r++)
                {
                    for (int t = 0; t < trees; t++)
                    {
                        AssertTree(plan, r, t, servers, roots[r], $"{aggregation} n={servers} rack={rackSize} r={r} t={t}");
                    }
                }
            }
        }
    }

    [Fact]
    public void RackAggregatorsRotateOverTheServersOfARackWithTheReduceTask()
    {
        // 3 racks of 4; the root in rack 0, so racks 1 and 2 each pick an aggregator per reduce task.
        var plan = new RackPlan(12, 4, roots: [0, 1, 2, 3], trees: 1);
        var aggregators = Enumerable.Range(0, 4).Select(r => Enumerable.Range(4, 4).Single(s => plan.ChildrenOf(r, 0, s) == 3)).ToList();
        Assert.Equal(4, aggregators.Distinct().Count());
        // On one switch (one rack of every server) it is the direct shuffle: everyone sends to the root.
        var single = new RackPlan(12, 40, roots: [5]);
        Assert.All(Enumerable.Range(0, 12).Where(s => s != 5), s => Assert.Equal(-1, single.ParentOf(0, 0, s)));
        Assert.Equal(11, single.ChildrenOf(0, 0, 5));
    }

    [Fact]
    public void AChainVisitsEveryServerOnceAndABinaryTreeIsLogarithmicallyDeep()
    {
        const int n = 64;
        var chain = new ChainPlan(n, [10]);
        var binary = new BinaryPlan(n, [10]);
        Assert.Equal(n - 1, Enumerable.Range(0, n).Max(s => Depth(chain, s, 10)));
        Assert.Equal(6, Enumerable.Range(0, n).Max(s => Depth(binary, s, 10))); // ceil(log2 64)
        Assert.All(Enumerable.Range(0, n), s => Assert.InRange(binary.ChildrenOf(0, 0, s), 0, 2));
    }

    private static int Depth(IAggregationPlan plan, int server, int root)
    {
        int depth = 0;
        for (int node = server; node != root; depth++)
        {
            int parent = plan.ParentOf(0, 0, node);
            node = parent < 0 ? root : parent;
        }
        return depth;
    }

    private static void AssertTree(IAggregationPlan plan, int reduceTask, int tree, int servers, int root, string what)
    {
        Assert.True(plan.ParentOf(reduceTask, tree, root) == -1, $"{what}: the root has a parent");
        var named = new int[servers];
        for (int s = 0; s < servers; s++)
        {
            if (s == root)
            {
                continue;
            }
            int parent = plan.ParentOf(reduceTask, tree, s);
            int to = parent < 0 ? root : parent;
            Assert.True(to != s && (uint)to < (uint)servers, $"{what}: server {s} sends to {parent}");
            named[to]++;
            // Every server reaches the root within n - 1 hops, so there is no cycle.
            int node = s, hops = 0;
            while (node != root)
            {
                int p = plan.ParentOf(reduceTask, tree, node);
                node = p < 0 ? root : p;
                Assert.True(++hops < servers, $"{what}: server {s} never reaches the root");
            }
        }
        for (int s = 0; s < servers; s++)
        {
            Assert.True(named[s] == plan.ChildrenOf(reduceTask, tree, s), $"{what}: server {s} waits for {plan.ChildrenOf(reduceTask, tree, s)} streams, {named[s]} come");
        }
    }

    private static JobSimulationOptions Options(Torus torus, NetworkKind network, Aggregation aggregation, int rackSize = 40) => new()
    {
        Torus = torus,
        Mode = ShuffleMode.Tcp,
        Aggregation = aggregation,
        Network = new SwitchedNetworkOptions { Kind = network, RackSize = rackSize, Oversubscription = 4 },
        // A data-centre timeout keeps the runs that lose their first bursts short in simulated time.
        Tcp = new TcpOptions { MinRto = 1_000_000 },
        OutputRatio = 0.4,
        Settings = new SimulationSettings { Verify = true },
        WriteOutputFiles = true,
        MapParallelism = 1,
    };
}
