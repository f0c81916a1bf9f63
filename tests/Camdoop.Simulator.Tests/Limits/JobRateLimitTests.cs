using Camdoop.Experiments;
using Camdoop.MapReduce.Service;
using Camdoop.Monitoring.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Xunit.Abstractions;

namespace Camdoop.Simulator.Tests.Limits;

/// <summary>A per-job rate limit with two jobs at once on a simulated 3x3x3 cube: it holds on every port, and the other job goes on.</summary>
public sealed class JobRateLimitTests(ITestOutputHelper output)
{
    private static readonly Torus Cube = new(3, 3, 3);

    [Fact]
    public void ALimitedJobKeepsToItsRateOnEveryPortAndTheOtherJobIsNotHeldUp()
    {
        long limit = 100_000_000 / 8;
        var job = new JobSimulationOptions
        {
            Torus = Cube,
            Workload = Workload.Synthetic,
            OutputRatio = 1,
            Settings = new SimulationSettings { BytesPerServer = 1_500_000, Verify = true },
            ReduceTasks = 27,
            MapParallelism = 1,
        };
        var copies = ConcurrentPlacement.Copies(job, 2, JobPartitioning.Horizontal);
        ulong limited = copies[0].JobId;
        // Samples of the limited job's frame bytes on every port of every server, every 10 ms of simulated time.
        var samples = new List<(long At, long[] Bytes)>();
        Simulation? sampled = null;
        void Sample(Simulation sim)
        {
            if (!ReferenceEquals(sampled, sim))
            {
                // The run of both jobs comes last, after each job alone: keep its samples only.
                samples.Clear();
                sampled = sim;
            }
            var bytes = new long[Cube.Count * Ports.Count];
            foreach (var server in Cube.All())
            {
                var transport = sim.Host(server).GetService<CamdoopService>()!.Transport;
                foreach (var port in Ports.All)
                {
                    bytes[(Cube.IndexOf(server) * Ports.Count) + (int)port] = transport.Scheduler(port).JobBytesSent(limited);
                }
            }
            samples.Add((sim.Now, bytes));
            sim.Schedule(sim.Now + (10 * SimTime.Millisecond), () => Sample(sim));
        }
        var placed = copies.Select((c, k) => c with
        {
            Limits = [RateLimit.ForJob(limited, limit)],
            Configure = k == 0 ? sim => sim.Schedule(0, () => Sample(sim)) : null,
        }).ToList();

        var result = ConcurrentJobSimulation.Run(placed, runAlone: true);

        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.Verified, result.VerificationError);
        var a = result.Jobs![0];
        var b = result.Jobs[1];
        output.WriteLine($"limited job {a.ShuffleReduceSeconds:0.000} s, other {b.ShuffleReduceSeconds:0.000} s (alone {b.AloneSeconds:0.000} s, normalised {b.NormalizedTime:0.00})");

        // Over a window well after the start and before the limited job's end, every port carried at most the limit,
        // and the busiest ones the limit itself: the limit binds, and holds within 5 %.
        var (from, first) = samples.First(s => s.At >= 20 * SimTime.Millisecond);
        var (to, last) = samples.Last(s => s.At <= 60 * SimTime.Millisecond);
        Assert.True(to - from >= 30 * SimTime.Millisecond && a.ShuffleReduceSeconds > to / 1e9, $"window {from}..{to} ns, job ends at {a.ShuffleReduceSeconds} s");
        double seconds = (to - from) / 1e9;
        var rates = first.Zip(last, (x, y) => (y - x) / seconds).ToList();
        output.WriteLine($"window {from / 1e6:0}-{to / 1e6:0} ms: busiest port {rates.Max() * 8 / 1e6:0.00} Mbit/s, limit {limit * 8 / 1e6:0} Mbit/s");
        Assert.All(rates, r => Assert.True(r <= limit * 1.05, $"{r * 8 / 1e6:0.00} Mbit/s on a port"));
        Assert.InRange(rates.Max(), limit * 0.95, limit * 1.05);

        // The other job was not held up: close to its time alone, and done long before the limited one.
        Assert.True(b.NormalizedTime < 1.3, $"the other job took {b.NormalizedTime:0.00}x its time alone");
        Assert.True(a.ShuffleReduceSeconds > 3 * b.ShuffleReduceSeconds);
        Assert.True(a.AloneSeconds > 0.9 * a.ShuffleReduceSeconds, "the limited job alone is as slow: its limit, not the other job, sets its pace");
    }
}
