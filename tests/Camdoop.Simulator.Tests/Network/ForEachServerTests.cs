using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;

namespace Camdoop.Simulator.Tests.Network;

/// <summary>
/// Work done on every server at one instant (starting a job) runs on the partitions' threads, and the run is still
/// the one a single thread gives.
/// </summary>
public class ForEachServerTests
{
    private const long Ms = SimTime.Millisecond;

    private sealed record Visit(int Server, int Thread);

    private sealed record BurstRun(long Events, IReadOnlyList<LinkStats> Links, long Received, IReadOnlyList<Visit> Visits);

    /// <summary>Random traffic, plus a burst from every server sent through ForEachServer at 2 ms.</summary>
    private static BurstRun Run(int threads)
    {
        var torus = new Torus(4, 3, 5);
        using var sim = new Simulation(new SimulationOptions { Torus = torus, Seed = 7, LossRate = 0.01, Threads = threads });
        sim.Configure(h => h.Register(new RandomTrafficService(sim.Random.Fork((ulong)torus.IndexOf(h.Self)))));
        sim.Start();
        var visits = new List<Visit>();
        sim.Schedule(2 * Ms, () => sim.ForEachServer(i =>
        {
            lock (visits)
            {
                visits.Add(new Visit(i, Environment.CurrentManagedThreadId));
            }
            sim.Host(i).GetService<RandomTrafficService>()!.SendBurst();
        }));
        sim.RunUntil(8 * Ms);
        long received = torus.All().Sum(c => sim.Host(c).GetService<RandomTrafficService>()!.Received);
        return new BurstRun(sim.EventsProcessed, sim.Links.Select(l => l.Stats).ToList(), received, visits);
    }

    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    public void EveryServerOnceEachPartitionInOrderOnItsThreadAndTheRunUnchanged(int threads)
    {
        var one = Run(1);
        var many = Run(threads);
        Assert.Equal(Enumerable.Range(0, 60), one.Visits.Select(v => v.Server));
        Assert.Single(one.Visits.Select(v => v.Thread).Distinct());

        Assert.Equal(Enumerable.Range(0, 60), many.Visits.Select(v => v.Server).Order());
        var byThread = many.Visits.GroupBy(v => v.Thread).ToList();
        Assert.Equal(threads, byThread.Count); // every thread takes its own block of partitions
        foreach (var group in byThread)
        {
            var servers = group.Select(v => v.Server).ToList();
            Assert.Equal(servers.Order(), servers);
        }

        Assert.True(one.Received > 1_000, $"only {one.Received} frames received: not a busy run");
        Assert.Equal(one.Events, many.Events);
        Assert.Equal(one.Links, many.Links);
        Assert.Equal(one.Received, many.Received);
    }

    [Fact]
    public void AnExceptionOnAnyServerSurfacesOnTheCallingThread()
    {
        var torus = new Torus(4, 4, 4);
        using var sim = new Simulation(new SimulationOptions { Torus = torus, Threads = 2 });
        sim.Start();
        Assert.True(sim.RunsInParallel);
        var error = Assert.Throws<InvalidOperationException>(() => sim.ForEachServer(i =>
        {
            if (i == 45)
            {
                throw new InvalidOperationException("server 45 refused");
            }
        }));
        Assert.Equal("server 45 refused", error.Message);
        int visited = 0;
        sim.ForEachServer(_ => Interlocked.Increment(ref visited)); // the workers are still there after a failure
        Assert.Equal(64, visited);
    }

    [Fact]
    public void NotFromInsideAnEventNorBeforeStart()
    {
        var torus = new Torus(4, 4, 4);
        using var sim = new Simulation(new SimulationOptions { Torus = torus, Threads = 2 });
        Assert.Throws<InvalidOperationException>(() => sim.ForEachServer(_ => { }));
        Exception? seen = null;
        sim.Configure(h => h.Register(new CallbackService(2 * Ms, () =>
        {
            try
            {
                sim.ForEachServer(_ => { });
            }
            catch (InvalidOperationException e)
            {
                seen = e;
            }
        })));
        sim.Start();
        sim.RunUntil(3 * Ms);
        Assert.NotNull(seen);
    }
}
