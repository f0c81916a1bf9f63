using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;
using Camdoop.Tests.Shared;
using static Camdoop.Simulator.Tests.Network.SimulationFixture;

namespace Camdoop.Simulator.Tests.Network;

public class SimulationApiTests
{
    private const long Ms = SimTime.Millisecond;

    private sealed class ThrowingService : IService
    {
        public byte Id => 50;

        public string Name => "throwing";

        public void Start(INodeContext context) => context.SetTimer(Ms, () => throw new InvalidOperationException("service bug"));

        public void OnFrame(in InboundFrame frame)
        {
        }
    }

    private sealed class LoggingService : IService
    {
        public byte Id => 51;

        public string Name => "logging";

        public void Start(INodeContext context)
        {
            context.Log(LogLevel.Debug, "debug line");
            context.Log(LogLevel.Info, "info line");
            context.Log(LogLevel.Warning, "warning line");
        }

        public void OnFrame(in InboundFrame frame)
        {
        }
    }

    [Fact]
    public void ScheduledActionsRunAtTheirTimeInSchedulingOrder()
    {
        using var sim = new Simulation(Options());
        sim.Start();
        var seen = new List<(long, string)>();
        sim.Schedule(5 * Ms, () => seen.Add((sim.Now, "b")));
        sim.Schedule(2 * Ms, () => seen.Add((sim.Now, "a")));
        sim.Schedule(5 * Ms, () => seen.Add((sim.Now, "c")));
        sim.RunUntil(4 * Ms);
        Assert.Equal([(2 * Ms, "a")], seen);
        Assert.Equal(4 * Ms, sim.Now);
        sim.RunUntil(10 * Ms);
        Assert.Equal([(2 * Ms, "a"), (5 * Ms, "b"), (5 * Ms, "c")], seen);
        Assert.Throws<ArgumentOutOfRangeException>(() => sim.Schedule(9 * Ms, () => { }));
        Assert.Equal(3, sim.EventsOf(EventKind.Action));
    }

    [Fact]
    public void RunUntilAPredicateStopsWhenItHoldsOrAtTheTimeLimit()
    {
        var sender = new Coordinate(0, 0, 0);
        using var sim = new Simulation(Options(), h =>
            h.Register(new SaturatingSender(20, 1000, h.Self == sender ? [Port.YPlus] : [], limit: 500)));
        sim.Start();
        var receiver = Service<SaturatingSender>(sim, sim.Torus.Neighbour(sender, Port.YPlus));

        Assert.True(sim.RunUntil(() => receiver.Received >= 100, 50 * Ms, checkEvery: 1));
        Assert.Equal(100, receiver.Received); // exact with checkEvery 1
        long firstStop = sim.Now;
        Assert.True(firstStop < 2 * Ms);

        Assert.True(sim.RunUntil(() => receiver.Received >= 300, 50 * Ms));
        Assert.InRange(receiver.Received, 300, 300 + 256);

        Assert.False(sim.RunUntil(() => receiver.Received > 500, 20 * Ms));
        Assert.Equal(20 * Ms, sim.Now);
        Assert.Equal(500, receiver.Received);
        Assert.True(sim.RunUntil(() => true, 0)); // already true: returns at once
    }

    [Fact]
    public void StepAndRunEventsProcessOneEventAtATime()
    {
        using var sim = new Simulation(Options());
        Assert.Throws<InvalidOperationException>(() => sim.Step());
        Assert.Throws<InvalidOperationException>(() => sim.Host(new Coordinate(0, 0, 0)));
        sim.Start();
        Assert.Throws<InvalidOperationException>(() => sim.Start());
        Assert.Throws<InvalidOperationException>(() => sim.Configure(_ => { }));
        Assert.True(sim.PendingEvents > 0);
        long next = sim.NextEventTime;
        Assert.True(sim.Step());
        Assert.Equal(1, sim.EventsProcessed);
        Assert.Equal(next, sim.Now);
        Assert.Equal(10, sim.RunEvents(10));
        Assert.Equal(11, sim.EventsProcessed);
        Assert.True(sim.WallTime > TimeSpan.Zero);
        Assert.True(sim.EventsPerSecond > 0);
    }

    [Fact]
    public void ServiceExceptionsSurfaceFromTheRun()
    {
        using var sim = new Simulation(Options(), h => h.Register(new ThrowingService()));
        sim.Start();
        var ex = Assert.Throws<InvalidOperationException>(() => sim.RunUntil(2 * Ms));
        Assert.Equal("service bug", ex.Message);
    }

    [Fact]
    public void LogsGoToTheSinkAndWarningsAreKept()
    {
        var sunk = new List<LogEntry>();
        var options = Options() with { LogSink = sunk.Add, MinLogLevel = LogLevel.Info };
        using var sim = new Simulation(options, h => h.Register(new LoggingService()));
        sim.Start();
        Assert.Equal(27, sim.Warnings.Count);
        Assert.Equal(27, sim.WarningCount);
        Assert.All(sim.Warnings, w => Assert.Equal("warning line", w.Message));
        Assert.Equal(27, sunk.Count(e => e.Message == "info line"));
        Assert.DoesNotContain(sunk, e => e.Level == LogLevel.Debug);
        Assert.Contains("(2,2,2) Warning: warning line", sim.Warnings[^1].ToString(), StringComparison.Ordinal);
    }

    [Fact]
    public void EveryNodeHasItsOwnDataDirectoryWhichDisposeDeletes()
    {
        var root = Path.Combine(Path.GetTempPath(), "camdoop-sim-tests", Guid.NewGuid().ToString("N"));
        var options = Options() with { DataRoot = root };
        var sim = new Simulation(options);
        sim.Start();
        var c = new Coordinate(1, 2, 0);
        // A server's directory appears when something asks for it, not before.
        Assert.False(Directory.Exists(sim.DataDirectoryOf(c)));
        string dir = sim.Host(c).DataDirectory;
        Assert.Equal(sim.DataDirectoryOf(c), dir);
        Assert.StartsWith(root, dir, StringComparison.Ordinal);
        Assert.True(Directory.Exists(dir));
        Assert.False(Directory.Exists(sim.DataDirectoryOf(new Coordinate(0, 0, 0))));
        Assert.NotEqual(dir, sim.Host(new Coordinate(0, 0, 0)).DataDirectory);

        // A reboot keeps the disk unless asked to wipe it.
        File.WriteAllText(Path.Combine(dir, "chunk"), "data");
        sim.FailServer(c, Ms);
        sim.RestoreServer(c, 2 * Ms);
        sim.RunUntil(3 * Ms);
        Assert.True(File.Exists(Path.Combine(dir, "chunk")));
        sim.FailServer(c, 4 * Ms);
        sim.RestoreServer(c, 5 * Ms, wipeData: true);
        sim.RunUntil(6 * Ms);
        Assert.Equal(dir, sim.Host(c).DataDirectory);
        Assert.True(Directory.Exists(dir));
        Assert.Empty(Directory.EnumerateFileSystemEntries(dir));

        sim.Dispose();
        Assert.False(Directory.Exists(sim.RunDirectory));
        Assert.Throws<ObjectDisposedException>(() => sim.RunUntil(10 * Ms));

        using var keep = new Simulation(options with { DeleteDataOnDispose = false });
        keep.Start();
        keep.Dispose();
        Assert.True(Directory.Exists(keep.RunDirectory));
        Directory.Delete(root, recursive: true);
    }

    [Fact]
    public void LinksAreIndexedByServerAndPortAndPairedWithTheirReverse()
    {
        using var sim = new Simulation(Options(new Torus(2, 3, 4)));
        Assert.Equal(24 * 6, sim.Links.Count);
        foreach (var link in sim.Links)
        {
            Assert.Same(link, sim.Link(link.From, link.Port));
            Assert.Equal(sim.Torus.Neighbour(link.From, link.Port), link.To);
            Assert.Same(link, link.Peer.Peer);
            Assert.Equal(link.To, link.Peer.From);
            Assert.Equal(link.ToPort, link.Peer.Port);
        }
        // In a dimension of size 2 the two cables between the same servers stay distinct.
        var a = new Coordinate(0, 0, 0);
        Assert.NotSame(sim.Link(a, Port.XPlus).Peer, sim.Link(a, Port.XMinus).Peer);
        Assert.Throws<ArgumentOutOfRangeException>(() => sim.Link(new Coordinate(2, 0, 0), Port.XPlus));
    }

    [Fact]
    public void SteadyStateTrafficAllocatesNothing()
    {
        using var sim = new Simulation(Options(), h => h.Register(new SaturatingSender(20, FrameLayout.MaxPayload, Ports.All.ToArray())));
        sim.Start();
        sim.RunUntil(20 * Ms); // queues, rings, pool and event arrays reach their working size
        // Five more 20 ms stretches of traffic, the least of which must allocate nothing.
        long least = ThreadAllocations.LeastOf(5, pass =>
        {
            long events = sim.EventsProcessed;
            sim.RunUntil((20 + (20 * pass)) * Ms);
            Assert.True(sim.EventsProcessed - events > 50_000);
        });
        Assert.Equal(0, least);
    }
}
