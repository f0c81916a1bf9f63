using Camdoop.Experiments.Traffic;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;

namespace Camdoop.Simulator.Tests.Network.Switched;

public class SwitchedNetworkTests
{
    private const byte Probe = 20;

    private static SimulationOptions Options(Torus torus, NetworkKind kind, int nics = 1) =>
        new() { Torus = torus, Network = new SwitchedNetworkOptions { Kind = kind, NicsPerServer = nics } };

    [Fact]
    public void OneSwitchHasAPortPerNic()
    {
        var torus = new Torus(3, 3, 3);
        using var one = new Simulation(Options(torus, NetworkKind.Switch));
        using var teamed = new Simulation(Options(torus, NetworkKind.Switch, nics: 6));
        Assert.Equal(27, Assert.Single(one.Switches).Ports.Count);
        Assert.Equal(162, Assert.Single(teamed.Switches).Ports.Count);
        // One NIC: the other five ports of every server have no carrier.
        Assert.Equal(27 * 5, one.Links.Count(l => !l.CarrierUp));
        Assert.All(one.Links.Where(l => l.CarrierUp), l => Assert.True(l.FromIndex >= 27 || l.Port == Port.XPlus));
    }

    [Fact]
    public void RacksOf40AreOversubscribedOneToFourToTheCore()
    {
        // 100 servers: racks of 40, 40 and 20, with 10, 10 and 5 uplinks.
        using var sim = new Simulation(Options(new Torus(5, 5, 4), NetworkKind.Racks));
        Assert.Equal(["rack0", "rack1", "rack2", "core"], sim.Switches.Select(s => s.Name));
        Assert.Equal([50, 50, 25, 25], sim.Switches.Select(s => s.Ports.Count));
    }

    [Fact]
    public void AFatTreeHasTheSmallestKThatFits()
    {
        // 27 servers need k = 6 (54 host ports; k = 4 has 16): 9 edge switches in 3 pods, 9 aggregation, 9 core.
        using var sim = new Simulation(Options(new Torus(3, 3, 3), NetworkKind.FatTree));
        Assert.Equal(9, sim.Switches.Count(s => s.Name.StartsWith("edge", StringComparison.Ordinal)));
        Assert.Equal(9, sim.Switches.Count(s => s.Name.StartsWith("agg", StringComparison.Ordinal)));
        Assert.Equal(9, sim.Switches.Count(s => s.Name.StartsWith("core", StringComparison.Ordinal)));
        Assert.All(sim.Switches.Where(s => s.Name.StartsWith("core", StringComparison.Ordinal)), s => Assert.Equal(3, s.Ports.Count));
    }

    [Theory]
    [InlineData(NetworkKind.Switch, 2)]
    [InlineData(NetworkKind.FatTree, 6)]
    public void AFrameIsStoredAndForwardedAtEverySwitch(NetworkKind kind, int hops)
    {
        var torus = new Torus(3, 3, 3);
        using var sim = new Simulation(Options(torus, kind), h => h.Register(new SinkService(Probe, recordArrivals: true)));
        sim.Start();
        var from = new Coordinate(0, 0, 0);
        var to = new Coordinate(2, 2, 2); // server 26: another pod of the fat tree
        long sentAt = SimTime.Millisecond;
        var payload = new byte[1000];
        sim.Schedule(sentAt, () =>
        {
            var header = new FrameHeader(Probe, from, to);
            Assert.Equal(SendStatus.Queued, sim.Host(from).TrySend(Port.XPlus, ref header, default, payload));
        });
        sim.RunUntil(2 * SimTime.Millisecond);
        int frameLength = FrameLayout.HeaderSize + payload.Length;
        long perHop = ((frameLength + 24) * 8) + 500 + 10_000;
        var arrival = Assert.Single(sim.Host(to).GetService<SinkService>()!.Arrivals);
        Assert.Equal(sentAt + (hops * perHop), arrival.Time);
    }

    [Fact]
    public void TheSwitchDropsBeaconsAndUnroutableFrames()
    {
        var torus = new Torus(2, 2, 2);
        using var sim = new Simulation(Options(torus, NetworkKind.Switch), h => h.Register(new SinkService(Probe)));
        sim.Start();
        sim.RunUntil(SimTime.Millisecond);
        // Every server's link monitor sent one beacon on its NIC at boot, and nothing answers it.
        var sw = Assert.Single(sim.Switches);
        Assert.Equal(8, sw.Undeliverable);
        Assert.Equal(0, sw.FramesForwarded);
        Assert.All(torus.All(), c => Assert.True(sim.Host(c).IsLinkUp(Port.XPlus)));
    }

    /// <summary>A permutation and an incast at once, run to a fixed time (a run stopped when done may overshoot by a few events in parallel).</summary>
    private static TcpTrafficResult Permutation(int threads, NetworkKind kind)
    {
        using var traffic = new TcpTraffic(new TcpTrafficOptions
        {
            Torus = new Torus(4, 4, 3),
            Network = new SwitchedNetworkOptions { Kind = kind, PortBufferBytes = 64 * 1024, RackSize = 16 },
            Tcp = new() { MinRto = SimTime.Millisecond, InitialRto = 5 * SimTime.Millisecond },
            Flows = [.. TcpFlow.Permutation(48, 2_000_000, seed: 3), .. TcpFlow.Incast(48, 5, 300_000)],
            Threads = threads,
        });
        traffic.Start();
        traffic.Simulation.RunUntil(30 * SimTime.Second);
        return traffic.Measure(0);
    }

    [Theory]
    [InlineData(NetworkKind.Switch, 3)]
    [InlineData(NetworkKind.Racks, 2)]
    [InlineData(NetworkKind.FatTree, 4)]
    public void ThreadsDoNotChangeASwitchedRun(NetworkKind kind, int threads)
    {
        var one = Permutation(1, kind);
        var many = Permutation(threads, kind);
        Assert.True(one.AllDone, $"{one.Completion.Count(c => c < 0)} flows unfinished, {one.PayloadBytes} bytes, {one.Timeouts} timeouts");
        Assert.Equal(0, one.CorruptBytes);
        Assert.True(one.SwitchDrops > 0, "no queue overflowed: not a busy run");
        Assert.Equal(one.Completion, many.Completion);
        Assert.Equal(one.Events, many.Events);
        Assert.Equal(one.PacketHops, many.PacketHops);
        Assert.Equal(one.SwitchDrops, many.SwitchDrops);
        Assert.Equal(one.Timeouts, many.Timeouts);
    }
}
