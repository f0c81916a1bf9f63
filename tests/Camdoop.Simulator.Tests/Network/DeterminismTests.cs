using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;

namespace Camdoop.Simulator.Tests.Network;

public class DeterminismTests
{
    private const long Ms = SimTime.Millisecond;

    private sealed record RunResult(ulong Hash, long Events, long Traced, LinkStats Totals, long Received, IReadOnlyList<string> Lines, long Now);

    /// <summary>Random traffic on every server, zero-copy forwarding, local echoes, random loss, and failures.</summary>
    private static RunResult BusyRun(ulong seed)
    {
        var torus = new Torus(4, 3, 3);
        var options = new SimulationOptions { Torus = torus, Seed = seed, TraceEvents = true, TraceLines = 200, LossRate = 0.01 };
        using var sim = new Simulation(options);
        sim.Configure(h => h.Register(new RandomTrafficService(sim.Random.Fork((ulong)torus.IndexOf(h.Self)))));
        sim.Start();
        // Failure times drawn from the run's generator too.
        var victim = torus.CoordinateOf(sim.Random.Next(torus.Count));
        sim.FailServer(victim, sim.Random.NextLong(10 * Ms));
        sim.RestoreServer(victim, 20 * Ms);
        sim.FailLink(torus.CoordinateOf(sim.Random.Next(torus.Count)), (Port)sim.Random.Next(6), 5 * Ms);
        sim.RunUntil(30 * Ms);
        long received = 0;
        foreach (var c in torus.All())
        {
            received += sim.Host(c).GetService<RandomTrafficService>()!.Received;
        }
        var trace = sim.Trace!;
        return new RunResult(trace.Hash, sim.EventsProcessed, trace.Events, sim.LinkTotals, received, [.. trace.Lines], sim.Now);
    }

    [Fact]
    public void TheSameSeedGivesTheSameRun()
    {
        var first = BusyRun(seed: 42);
        var second = BusyRun(seed: 42);
        Assert.True(first.Events > 100_000, $"only {first.Events} events: not a busy run");
        Assert.True(first.Totals.Drops > 0);
        Assert.Equal(first.Events, first.Traced);
        Assert.Equal(first.Hash, second.Hash);
        Assert.Equal(first.Events, second.Events);
        Assert.Equal(first.Totals, second.Totals);
        Assert.Equal(first.Received, second.Received);
        Assert.Equal(first.Lines, second.Lines);
        Assert.Equal(200, first.Lines.Count);
    }

    [Fact]
    public void ADifferentSeedGivesADifferentRun()
    {
        var a = BusyRun(seed: 42);
        var b = BusyRun(seed: 43);
        Assert.NotEqual(a.Hash, b.Hash);
        Assert.NotEqual(a.Totals, b.Totals);
    }
}
