using Camdoop.Experiments;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.KeyRouting.Tests.Simulation;

public class PingTests
{
    private const long Ms = RoutedCube.Ms;

    [Theory]
    [InlineData("3x3x3")]
    [InlineData("8x8x8")]
    public void Ping_hop_counts_equal_torus_distance_and_rtt_grows_linearly_with_hops(string shape)
    {
        var torus = Torus.Parse(shape);
        var result = PingExperiment.Run(new PingExperimentOptions { Torus = torus, Source = new Coordinate(1, 0, 2) });

        Assert.Equal(torus.Count - 1, result.Sent);
        Assert.Equal(0, result.Lost);
        Assert.Equal(0, result.HopMismatches);
        Assert.Equal(Enumerable.Range(1, torus.Diameter), result.ByDistance.Select(r => r.Hops));
        var (slope, intercept) = result.Fit;
        Assert.True(slope > 0);
        foreach (var row in result.ByDistance)
        {
            double predicted = intercept + (slope * row.Hops);
            Assert.InRange(row.MeanRttMs, predicted * 0.98, predicted * 1.02);
        }
        // The slope is the simulated link's round trip per hop: twice (serialisation of a minimum frame with its
        // framing overhead + propagation + per-hop forwarding latency).
        var net = new SimulationOptions { Torus = torus };
        double perHopNs = 2.0 * (((60 + net.FramingOverheadBytes) * 8e9 / net.LinkRateBitsPerSecond) + net.PropagationDelay + net.ForwardingLatency);
        Assert.InRange(slope, perHopNs / 1e6 * 0.95, perHopNs / 1e6 * 1.05);
        Assert.Contains("RTT per hop", result.ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void A_sampled_run_with_a_slower_hop_scales_the_per_hop_rtt()
    {
        var torus = new Torus(8, 8, 8);
        var fast = PingExperiment.Run(new PingExperimentOptions { Torus = torus, Targets = 60, Seed = 3 });
        var slow = PingExperiment.Run(new PingExperimentOptions { Torus = torus, Targets = 60, Seed = 3, ForwardingLatency = 64_000 });
        Assert.Equal(60, slow.Sent);
        Assert.Equal(fast.Samples.Select(s => s.Target), slow.Samples.Select(s => s.Target));
        // 64 us per hop each way plus the wire: about the paper's 0.13 ms RTT per hop.
        Assert.InRange(slow.MeanRttPerHopMs, 0.125, 0.135);
        Assert.True(slow.MeanRttPerHopMs > 4 * fast.MeanRttPerHopMs);
    }

    [Fact]
    public void Pinging_self_takes_no_hops_an_unreachable_server_is_refused_and_a_crashed_one_times_out()
    {
        using var cube = new RoutedCube(new Torus(3, 3, 3), extra: h => PingService.Install(h));
        var source = new Coordinate(0, 0, 0);
        var ping = cube.Sim.Host(source).GetService<PingService>()!;
        var results = new List<PingResult>();
        cube.Sim.Schedule(Ms, () => Assert.Equal(SendStatus.Queued, ping.Ping(source, results.Add)));
        cube.Sim.RunUntil(2 * Ms);
        var self = Assert.Single(results);
        Assert.Equal((PingOutcome.Replied, 0, 0), (self.Outcome, self.ForwardHops, self.ReturnHops));

        var victim = new Coordinate(1, 1, 1);
        cube.Sim.FailServer(victim, 3 * Ms);
        cube.Sim.RunUntil(100 * Ms);
        SendStatus refused = default;
        cube.Sim.Schedule(cube.Sim.Now, () => refused = ping.Ping(victim, results.Add));
        cube.Sim.RunUntil(cube.Sim.Now + Ms);
        Assert.Equal(SendStatus.Unreachable, refused);

        // A ping in flight when its target crashes is reported lost after the timeout.
        var doomed = new Coordinate(2, 2, 2);
        long sentAt = cube.Sim.Now + Ms;
        cube.Sim.Schedule(sentAt, () => Assert.Equal(SendStatus.Queued, ping.Ping(doomed, results.Add, timeoutNs: 50 * Ms)));
        cube.Sim.FailServer(doomed, sentAt + 1);
        cube.Sim.RunUntil(sentAt + (60 * Ms));
        Assert.Equal(2, results.Count);
        Assert.Equal(PingOutcome.TimedOut, results[1].Outcome);
        Assert.Equal(doomed, results[1].Target);
        Assert.Equal(0, ping.Outstanding);
    }
}
