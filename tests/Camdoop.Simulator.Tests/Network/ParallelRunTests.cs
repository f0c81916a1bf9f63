using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;

namespace Camdoop.Simulator.Tests.Network;

/// <summary>
/// Several partitions on several threads must give exactly the run one thread gives: same events, same link
/// counters, same deliveries, with loss and failures, whatever the number of partitions.
/// </summary>
public class ParallelRunTests
{
    private const long Ms = SimTime.Millisecond;

    private sealed record RunResult(long Events, long Stale, IReadOnlyList<LinkStats> Links, long Received, long Now, ulong? Hash, bool Parallel, long Warnings);

    /// <summary>Random traffic, zero-copy forwarding, local echoes, random loss, a server crash and reboot, a cut cable.</summary>
    private static RunResult BusyRun(int threads, bool trace = false, Torus? torus = null, bool lockstep = false)
    {
        torus ??= new Torus(4, 3, 5);
        var options = new SimulationOptions { Torus = torus, Seed = 42, LossRate = 0.01, Threads = threads, TraceEvents = trace };
        using var sim = new Simulation(options);
        sim.Configure(h => h.Register(new RandomTrafficService(sim.Random.Fork((ulong)torus.IndexOf(h.Self)), lockstep)));
        sim.Start();
        var crashed = new Coordinate(1, 2, 3 % torus.SizeZ);
        var cut = new Coordinate(torus.SizeX - 1, 0, torus.SizeZ - 1);
        sim.FailServer(crashed, 4 * Ms);
        sim.RestoreServer(crashed, 12 * Ms);
        sim.FailLink(cut, Port.XPlus, 6 * Ms);
        sim.RestoreLink(cut, Port.XPlus, 9 * Ms);
        sim.RunUntil(10 * Ms);
        bool parallel = sim.RunsInParallel;
        sim.RunUntil(20 * Ms);
        long received = 0;
        foreach (var c in torus.All())
        {
            received += sim.Host(c).GetService<RandomTrafficService>()!.Received;
        }
        return new RunResult(sim.EventsProcessed, sim.StaleEvents, sim.Links.Select(l => l.Stats).ToList(), received, sim.Now,
            sim.Trace?.Hash, parallel, sim.WarningCount);
    }

    [Theory]
    [InlineData(2, false)]
    [InlineData(3, false)]
    [InlineData(7, false)]
    [InlineData(2, true)]
    [InlineData(5, true)]
    public void ThreadsDoNotChangeTheRun(int threads, bool lockstep)
    {
        var one = BusyRun(1, lockstep: lockstep);
        var many = BusyRun(threads, lockstep: lockstep);
        Assert.False(one.Parallel);
        Assert.True(many.Parallel);
        Assert.True(one.Events > 50_000, $"only {one.Events} events: not a busy run");
        Assert.True(one.Stale > 0, "the failures voided no event");
        Assert.True(one.Links.Sum(l => l.Drops) > 0);
        Assert.Equal(one.Events, many.Events);
        Assert.Equal(one.Stale, many.Stale);
        Assert.Equal(one.Received, many.Received);
        Assert.Equal(one.Now, many.Now);
        Assert.Equal(one.Warnings, many.Warnings);
        Assert.Equal(one.Links, many.Links);
    }

    /// <summary>
    /// Partitions synchronise with their neighbours, not all together every link delay: the threads meet once per
    /// 64 link delays of busy traffic (to run actions, check predicates and even out frame pools), and the run is still
    /// the one-thread run.
    /// </summary>
    [Fact]
    public void ThreadsMeetOncePerManyLinkDelaysAndStillAgree()
    {
        var torus = new Torus(4, 4, 4);
        RunResult Run(int threads, out long meetings, out long lookahead)
        {
            using var sim = new Simulation(new SimulationOptions { Torus = torus, Seed = 7, Threads = threads });
            sim.Configure(h => h.Register(new RandomTrafficService(sim.Random.Fork((ulong)torus.IndexOf(h.Self)))));
            sim.Start();
            sim.RunUntil(20 * Ms);
            meetings = sim.ParallelRuns;
            lookahead = sim.Lookahead;
            return new RunResult(sim.EventsProcessed, sim.StaleEvents, sim.Links.Select(l => l.Stats).ToList(), 0, sim.Now, null, sim.RunsInParallel, 0);
        }
        var one = Run(1, out _, out _);
        var two = Run(2, out long meetings, out long lookahead);
        Assert.True(two.Parallel);
        Assert.True(one.Events > 10_000, $"only {one.Events} events: not a busy run");
        Assert.InRange(meetings, 1, (20 * Ms / lookahead / 64) + 2);
        Assert.Equal(one.Events, two.Events);
        Assert.Equal(one.Links, two.Links);
        Assert.Equal(one.Now, two.Now);
    }

    [Fact]
    public void OddSizedToriWithWrapAroundLinksInsideAPartitionAgreeToo()
    {
        var torus = new Torus(3, 3, 3);
        var one = BusyRun(1, torus: torus);
        var two = BusyRun(2, torus: torus);
        Assert.Equal(one.Events, two.Events);
        Assert.Equal(one.Links, two.Links);
        Assert.Equal(one.Received, two.Received);
    }

    [Fact]
    public void TracingRunsTheOneGlobalOrderOnOneThreadWhateverThePartitions()
    {
        var one = BusyRun(1, trace: true);
        var three = BusyRun(3, trace: true);
        Assert.False(three.Parallel);
        Assert.Equal(one.Hash, three.Hash);
        Assert.Equal(one.Links, three.Links);
    }

    /// <summary>
    /// Frames stay in the pool of the partition that received them. When traffic only flows one way (servers at x = 0
    /// sending to x = 1, which send nothing), the senders' pools would run dry and allocate a frame per send; between
    /// windows the receivers' surplus refills them instead.
    /// </summary>
    [Fact]
    public void FramesFlowingOneWayAreRecycledRatherThanAllocatedPerSend()
    {
        var torus = new Torus(4, 4, 4);
        const int perSender = 4000;
        using var sim = new Simulation(new SimulationOptions { Torus = torus, Threads = 2 });
        sim.Configure(h => h.Register(new SaturatingSender(20, FrameLayout.MaxPayload, h.Self.X == 0 ? [Port.XPlus] : [], perSender)));
        sim.Start();
        sim.RunUntil(2000 * Ms);
        Assert.True(sim.RunsInParallel);
        long sent = 0, received = 0;
        foreach (var c in torus.All())
        {
            var service = sim.Host(c).GetService<SaturatingSender>()!;
            sent += service.Sent;
            received += service.Received;
        }
        Assert.Equal(16L * perSender, sent);
        Assert.Equal(sent, received);
        Assert.InRange(sim.FramesInUse, 0, torus.Count * Ports.Count); // beacons on the wire
        Assert.True(sim.FramesAllocated < sent / 6, $"{sim.FramesAllocated} frames allocated for {sent} sent");
    }

    [Fact]
    public void PartitionsAreCappedByTheServersAndNeedALinkDelayToRunAhead()
    {
        using (var sim = new Simulation(new SimulationOptions { Torus = new Torus(2, 2, 2), Threads = 64 }))
        {
            Assert.Equal(8, sim.Partitions);
            Assert.Equal(8, sim.Threads);
            Assert.True(sim.RunsInParallel);
        }
        using (var sim = new Simulation(new SimulationOptions { Torus = new Torus(4, 4, 4), Threads = 2 }))
        {
            // Several partitions per thread, so that threads can even out a busy region.
            Assert.Equal(2, sim.Threads);
            Assert.True(sim.Partitions > sim.Threads);
        }
        using (var sim = new Simulation(new SimulationOptions { Torus = new Torus(4, 4, 4) }))
        {
            Assert.Equal(1, sim.Partitions);
            Assert.False(sim.RunsInParallel);
        }
        using (var sim = new Simulation(new SimulationOptions { Torus = new Torus(2, 2, 2), Threads = 2, PropagationDelay = 0, ForwardingLatency = 0 }))
        {
            Assert.False(sim.RunsInParallel);
        }
        Assert.Throws<ArgumentOutOfRangeException>(() => new Simulation(new SimulationOptions { Torus = new Torus(2, 2, 2), Threads = 0 }));
    }

    [Fact]
    public void AServiceExceptionInAnotherPartitionSurfacesOnTheDrivingThread()
    {
        var torus = new Torus(4, 4, 4);
        var victim = new Coordinate(1, 2, 2);
        using var sim = new Simulation(new SimulationOptions { Torus = torus, Threads = 2 });
        sim.Configure(h =>
        {
            h.Register(new RandomTrafficService(sim.Random.Fork((ulong)torus.IndexOf(h.Self))));
            if (h.Self == victim)
            {
                h.Register(new ThrowingService(3 * Ms));
            }
        });
        sim.Start();
        Assert.True(sim.RunsInParallel);
        var error = Assert.Throws<InvalidOperationException>(() => sim.RunUntil(10 * Ms));
        Assert.Equal("boom at (1,2,2)", error.Message);
    }

    [Fact]
    public void ActionsCannotBeScheduledFromInsideAParallelRun()
    {
        var torus = new Torus(4, 4, 4);
        using var sim = new Simulation(new SimulationOptions { Torus = torus, Threads = 2 });
        Exception? seen = null;
        sim.Configure(h => h.Register(new CallbackService(2 * Ms, () =>
        {
            try
            {
                sim.Schedule(5 * Ms, () => { });
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

    [Fact]
    public void FramesCrossingPartitionsAreAllReturnedToSomePool()
    {
        var torus = new Torus(4, 4, 2);
        var sim = new Simulation(new SimulationOptions { Torus = torus, Threads = 2, LossRate = 0.02 });
        sim.Configure(h => h.Register(new RandomTrafficService(sim.Random.Fork((ulong)torus.IndexOf(h.Self)))));
        sim.Start();
        sim.RunUntil(5 * Ms);
        Assert.True(sim.FramesInUse > 0);
        sim.Dispose();
        Assert.InRange(sim.FramesInUse, 0, torus.Count * Ports.Count); // beacons on the wire
    }

    private sealed class ThrowingService(long at) : IService
    {
        private INodeContext _context = null!;

        public byte Id => 41;

        public string Name => "throwing";

        public void Start(INodeContext context)
        {
            _context = context;
            context.SetTimer(at, () => throw new InvalidOperationException($"boom at {_context.Self}"));
        }

        public void OnFrame(in InboundFrame frame)
        {
        }
    }
}
