using Camdoop.Experiments.Traffic;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Network.Switched;

/// <summary>GRIN: the racks network plus cables between servers' free ports, and what a server gains from them.</summary>
public class GrinNetworkTests
{
    private const int RackSize = 40;

    private static SimulationOptions Options(Torus torus, int freePorts) =>
        new() { Torus = torus, Network = new SwitchedNetworkOptions { Kind = NetworkKind.Grin, FreePorts = freePorts } };

    /// <summary>Every server-to-server cable once, as (lower server, higher server), from the link directions.</summary>
    private static List<(int A, int B)> Cables(Simulation sim) =>
        [.. sim.Links.Where(l => l.FromIndex < sim.Torus.Count && l.ToIndex < sim.Torus.Count && l.CarrierUp && l.FromIndex < l.ToIndex)
            .Select(l => (l.FromIndex, l.ToIndex))];

    [Theory]
    [InlineData(3, 3, 3, 1)]
    [InlineData(3, 3, 3, 2)]
    [InlineData(4, 4, 4, 1)]
    [InlineData(4, 4, 4, 2)]
    [InlineData(4, 4, 4, 3)]
    [InlineData(4, 4, 4, 4)]
    [InlineData(4, 4, 4, 5)]
    [InlineData(5, 5, 4, 3)] // racks of 40, 40 and 20: the last rack has no pair
    public void TheWiringRuleHolds(int x, int y, int z, int freePorts)
    {
        using var sim = new Simulation(Options(new Torus(x, y, z), freePorts));
        int n = sim.Torus.Count;
        var cables = Cables(sim);
        Assert.NotEmpty(cables);
        Assert.All(cables, c => Assert.NotEqual(c.A, c.B));
        Assert.Equal(cables.Count, cables.Distinct().Count());
        // Same rack, or the neighbouring rack.
        Assert.All(cables, c => Assert.InRange((c.B / RackSize) - (c.A / RackSize), 0, 1));
        var degree = new int[n];
        foreach (var (a, b) in cables)
        {
            degree[a]++;
            degree[b]++;
        }
        Assert.All(degree, d => Assert.InRange(d, freePorts - 1, freePorts));
        if (freePorts % 2 == 0)
        {
            Assert.All(degree, d => Assert.Equal(freePorts, d));
        }
        else
        {
            // The odd port's matching leaves at most one server of each rack without a partner.
            Assert.All(Enumerable.Range(0, n).Where(s => degree[s] < freePorts).GroupBy(s => s / RackSize), g => Assert.Single(g));
        }
        // Each cable takes the server's ports after its NIC (port 0), which stays cabled to its rack's switch.
        Assert.All(sim.Links.Where(l => l.FromIndex < n && l.ToIndex < n && l.CarrierUp), l => Assert.InRange((int)l.Port, 1, freePorts));
        Assert.All(Enumerable.Range(0, n), s => Assert.True(sim.Links[s * Ports.Count].ToIndex >= n));
    }

    [Fact]
    public void TheRingAndTheCrossRackCablesGoWhereTheRuleSays()
    {
        // 64 servers: racks of 40 and 24. Three free ports: a ring of offset 1 in each rack, and the odd port to the
        // same position of the other rack (24 pairs); the 16 servers of rack 0 past position 23 pair among themselves.
        using var sim = new Simulation(Options(new Torus(4, 4, 4), 3));
        var cables = Cables(sim).ToHashSet();
        Assert.Contains((0, 1), cables);
        Assert.Contains((0, 39), cables); // the ring closes in rack 0
        Assert.Contains((40, 63), cables); // and in rack 1
        Assert.Contains((5, 45), cables);
        Assert.Contains((23, 63), cables);
        Assert.Contains((24, 32), cables); // the 16 left over pair with the server eight places on
        Assert.Equal(24, cables.Count(c => c.A < RackSize && c.B >= RackSize));
        Assert.Equal(64 + 24 + 8, cables.Count);
    }

    [Fact]
    public void NoFreePortIsTheRacksNetwork()
    {
        var torus = new Torus(4, 4, 4);
        using var grin = new Simulation(Options(torus, 0));
        using var racks = new Simulation(new SimulationOptions { Torus = torus, Network = new SwitchedNetworkOptions { Kind = NetworkKind.Racks } });
        Assert.Empty(Cables(grin));
        Assert.Equal(racks.Links.Select(l => l.ToString()), grin.Links.Select(l => l.ToString()));
        Assert.Equal(racks.Switches.Select(s => s.Name), grin.Switches.Select(s => s.Name));
    }

    [Fact]
    public void TooManyFreePortsOrTeamedNicsAreRefused()
    {
        var torus = new Torus(3, 3, 3);
        Assert.Throws<ArgumentOutOfRangeException>(() => new Simulation(Options(torus, 6)));
        Assert.Throws<ArgumentOutOfRangeException>(() => new Simulation(new SimulationOptions
        {
            Torus = torus,
            Network = new SwitchedNetworkOptions { Kind = NetworkKind.Grin, FreePorts = 2, NicsPerServer = 6 },
        }));
        Assert.Throws<ArgumentOutOfRangeException>(() => new Simulation(new SimulationOptions
        {
            Torus = torus,
            Network = new SwitchedNetworkOptions { Kind = NetworkKind.Racks, FreePorts = 2 },
        }));
    }

    /// <summary>
    /// One server sends 4 MB to each of eight others while the rest idle. On racks its NIC caps it at line rate; with
    /// two free ports, flows pinned to its neighbours' cables go up their idle uplinks, relayed below their services,
    /// and the server sends well above its own link rate. Every byte still arrives intact.
    /// </summary>
    [Fact]
    public void ABusyServerBorrowsItsIdleNeighboursUplinks()
    {
        var torus = new Torus(3, 3, 3);
        const int sender = 13;
        const long bytes = 4_000_000;
        // Not its ring neighbours (12, 14): every flow crosses the switch.
        var flows = new[] { 0, 3, 6, 9, 17, 20, 23, 26 }.Select(d => new TcpFlow(sender, d, bytes)).ToList();
        double Throughput(TcpTrafficResult r) => r.PayloadBytes * 8 / SimTime.ToSeconds(r.Duration);

        using var racks = new TcpTraffic(new TcpTrafficOptions
        {
            Torus = torus,
            Network = new SwitchedNetworkOptions { Kind = NetworkKind.Racks, PortBufferBytes = 4 << 20 },
            Flows = flows,
        });
        using var grin = new TcpTraffic(new TcpTrafficOptions
        {
            Torus = torus,
            Network = new SwitchedNetworkOptions { Kind = NetworkKind.Grin, FreePorts = 2, PortBufferBytes = 4 << 20 },
            Flows = flows,
        });
        var alone = racks.Run();
        var borrowed = grin.Run();
        Assert.True(alone.AllDone && borrowed.AllDone);
        Assert.Equal(0, borrowed.CorruptBytes);
        Assert.Equal(flows.Count * bytes, borrowed.PayloadBytes);
        double lineRate = 1e9 * TcpWire.MaxSegmentSize / (TcpWire.MaxSegmentSize + TcpWire.HeaderSize + FrameLayout.HeaderSize + 24);
        Assert.True(Throughput(alone) <= lineRate, $"racks: {Throughput(alone) / 1e9:0.000} Gbit/s");
        Assert.True(Throughput(borrowed) > 1.5 * lineRate, $"grin2: {Throughput(borrowed) / 1e9:0.000} Gbit/s");
        // The neighbours relayed (data up their uplinks, acknowledgements back over the cables); the sender did not.
        Assert.True(grin.Simulation.Host(12).Counters.FramesForwarded > 0);
        Assert.True(grin.Simulation.Host(14).Counters.FramesForwarded > 0);
        Assert.Equal(0, grin.Simulation.Host(sender).Counters.FramesForwarded);
    }
}
