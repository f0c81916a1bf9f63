using Camdoop.Experiments;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Reference;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// The stream shuffle with appliances: hosts past the job's servers (an extra x-plane) that have no map output and no
/// reduce task, and only merge their children's streams and forward one to the root. With two trees, one through the
/// appliances and one straight to the root, every output must equal the single-process reference.
/// </summary>
public sealed class AggregationApplianceTests
{
    /// <summary>Tree 0: server s sends to appliance servers + s mod appliances, which sends to the root; tree 1: straight to the root.</summary>
    private sealed class ThroughAppliances(int servers, int appliances, IReadOnlyList<int> roots) : IAggregationPlan
    {
        public int Trees => 2;

        public int ParentOf(int reduceTask, int tree, int node) =>
            node == roots[reduceTask] || node >= servers || tree == 1 ? -1 : servers + (node % appliances);

        public int ChildrenOf(int reduceTask, int tree, int node)
        {
            int root = roots[reduceTask];
            if (node == root)
            {
                return tree == 1 ? servers - 1 : Enumerable.Range(servers, appliances).Count(a => ChildrenOf(reduceTask, 0, a) > 0);
            }
            return tree == 0 && node >= servers ? Enumerable.Range(0, servers).Count(s => s != root && servers + (s % appliances) == node) : 0;
        }
    }

    [Fact]
    public void AppliancesMergeAndForwardAndTheOutputEqualsTheReference()
    {
        var servers = new Torus(3, 3, 3);
        var hosts = new Torus(4, 3, 3); // the fourth x-plane: 9 appliances
        int appliances = hosts.Count - servers.Count;
        const int reduceTasks = 3;
        var options = new JobSimulationOptions
        {
            Torus = servers,
            Workload = Workload.WordCount,
            Settings = new SimulationSettings { BytesPerServer = 6_000 },
            ReduceTasks = reduceTasks,
            Mode = ShuffleMode.Tcp,
            Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch },
            MapParallelism = 1,
        };
        using var input = JobSimulationInput.Prepare(options, keepInputs: true);
        var description = new JobDescription
        {
            JobId = 0xA99,
            Job = JobSpec.Parse("wordcount"),
            ReduceTasks = reduceTasks,
            Mode = ShuffleMode.Tcp,
            Output = OutputTarget.LocalFiles(),
        };
        var plan = new ThroughAppliances(servers.Count, appliances, JobPlacement.For(servers, description).RootIndices);
        var services = new DirectShuffleService[hosts.Count];
        var completions = new List<ReduceTaskResult>();
        string dataRoot = Directory.CreateTempSubdirectory("camdoop-appliances-").FullName;
        try
        {
            using var sim = new Simulation(new SimulationOptions { Torus = hosts, Network = options.Network, DataRoot = dataRoot, Threads = 1 }, host =>
            {
                var transport = TcpStreamTransport.Install(host, new TcpOptions { MinRto = 1_000_000 }, 64 * 1024);
                var service = new DirectShuffleService(host, transport, servers: servers);
                service.ReduceTaskCompleted += completions.Add;
                services[hosts.IndexOf(host.Self)] = service;
            });
            sim.Start();
            sim.ForEachServer(h => services[h].StartJob(description, input.Job, h < servers.Count ? [input.MapOutputs[h]] : [], plan));
            Assert.True(sim.RunUntil(() => completions.Count == reduceTasks, 60_000_000_000L), "the job did not finish");

            var reference = ReferenceMapReduce.Run(input.Job, input.Inputs!.Select(i => (ReadOnlyMemory<byte>)i).ToList(), reduceTasks);
            foreach (var c in completions)
            {
                Assert.True(servers.IndexOf(c.Server) < servers.Count, $"reduce task {c.ReduceTask} ran on {c.Server}, past the servers");
                Assert.Equal(reference.Format(c.ReduceTask), File.ReadAllBytes(c.OutputPath!));
            }
            for (int a = servers.Count; a < hosts.Count; a++)
            {
                var job = services[a].GetJob(description.JobId)!;
                Assert.Null(job.Failure);
                Assert.Empty(job.CompletedReduceTasks);
                // WordCount combines: an appliance forwards fewer bytes than it merged, and nothing of its own.
                Assert.True(job.MergedBytes > 0, $"appliance {a} merged nothing");
                Assert.InRange(job.ForwardedBytes, 1, job.MergedBytes - 1);
                Assert.True(job.IsFinished);
            }
            Assert.All(services, s => Assert.Equal(0, s.StreamsDropped));
        }
        finally
        {
            Directory.Delete(dataRoot, recursive: true);
        }
    }

    [Fact]
    public void AServersTorusThatIsNotAPrefixOfTheHostsIsRefused()
    {
        var hosts = new Torus(4, 3, 3);
        int refused = 0;
        using var sim = new Simulation(new SimulationOptions { Torus = hosts, Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch } }, host =>
        {
            var transport = TcpStreamTransport.Install(host, new TcpOptions(), 64 * 1024);
            var error = Assert.Throws<ArgumentException>(() => new DirectShuffleService(host, transport, servers: new Torus(3, 4, 3)));
            Assert.Contains("prefix", error.Message, StringComparison.Ordinal);
            refused++;
        });
        sim.Start();
        Assert.Equal(hosts.Count, refused);
    }
}
