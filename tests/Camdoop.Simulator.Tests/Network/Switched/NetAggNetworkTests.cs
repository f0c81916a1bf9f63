using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Energy;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;
using static Camdoop.Simulator.Tests.Network.SimulationFixture;

namespace Camdoop.Simulator.Tests.Network.Switched;

/// <summary>
/// A NetAgg network: the racks network plus agg boxes, hosts after the servers in extra x-planes of the hosts' torus,
/// each cabled to its switch at its own rate and working at its own processing rate.
/// </summary>
public class NetAggNetworkTests
{
    private const byte Probe = 20;

    // 27 servers in racks of 9: three racks and a core.
    private static readonly Torus Servers = new(3, 3, 3);

    private static SimulationOptions Options(AggBoxPlacement placement)
    {
        var network = new SwitchedNetworkOptions
        {
            Kind = NetworkKind.NetAgg,
            RackSize = 9,
            AggBoxes = new AggBoxOptions { Placement = placement },
        };
        var layout = NetAggLayout.For(network, Servers.Count);
        return new SimulationOptions { Torus = layout.HostTorus(Servers), Servers = Servers, Network = network };
    }

    [Fact]
    public void EverySwitchGetsABoxInAnExtraPlaneAndTheUpperTierOnlyTheCores()
    {
        using var all = new Simulation(Options(AggBoxPlacement.All));
        using var upper = new Simulation(Options(AggBoxPlacement.Upper));
        Assert.Equal(new Torus(4, 3, 3), all.Torus);
        Assert.Equal(Servers, all.Servers);
        Assert.Equal(4, all.AggBoxes!.Boxes);
        Assert.Equal(1, upper.AggBoxes!.Boxes);
        Assert.Equal(27, upper.AggBoxes.CoreBox);
        Assert.Equal(30, all.AggBoxes.CoreBox);
        Assert.Equal([27, 28, 29], Enumerable.Range(0, 3).Select(all.AggBoxes.RackBox));
        // A rack switch: 9 servers, 3 uplinks (9 downlinks at 1:4), its box. The core: 9 uplinks and its box.
        Assert.Equal([13, 13, 13, 10], all.Switches.Select(s => s.Ports.Count));
        Assert.Equal([12, 12, 12, 10], upper.Switches.Select(s => s.Ports.Count));
        // Each box's cable runs at 10 Gbit/s both ways; every other cable at the link rate; hosts past the boxes have none.
        var boxLinks = all.Links.Where(l => l.CarrierUp && (l.FromIndex is >= 27 and < 36 || l.ToIndex is >= 27 and < 36)).ToList();
        Assert.Equal(8, boxLinks.Count);
        Assert.All(boxLinks, l => Assert.Equal(10_000_000_000, l.RateBitsPerSecond));
        Assert.All(all.Links.Where(l => l.CarrierUp).Except(boxLinks), l => Assert.Equal(1_000_000_000, l.RateBitsPerSecond));
        Assert.All(Enumerable.Range(31, 5), host => Assert.False(all.Links[host * Ports.Count].CarrierUp));
    }

    [Fact]
    public void ABoxNamesItsSwitch()
    {
        using var sim = new Simulation(Options(AggBoxPlacement.All));
        Assert.Equal("box@rack1", sim.AggBoxes!.NameOf(28));
        Assert.Equal("box@core", sim.AggBoxes.NameOf(30));
        Assert.Equal(28, sim.AggBoxes.BoxNamed("rack1"));
        Assert.Equal(30, sim.AggBoxes.BoxNamed("CORE"));
        Assert.Equal(-1, sim.AggBoxes.BoxNamed("rack7"));
    }

    /// <summary>
    /// A box's work takes virtual time at its own rate though the servers' compute is not priced, and a frame it then
    /// sends crosses its 10 Gbit/s cable and the server's 1 Gbit/s one: every term computed by hand.
    /// </summary>
    [Fact]
    public void ABoxWorksAtItsRateAndSendsOverItsOwnCable()
    {
        long at = SimTime.Millisecond;
        var box = new Torus(4, 3, 3).CoordinateOf(29); // rack 2's box: (3, 0, 2)
        var server = new Torus(4, 3, 3).Neighbour(box, Port.XPlus); // (0, 0, 2): server 2, in rack 0
        var idle = new Coordinate(1, 0, 0);
        using var sim = new Simulation(Options(AggBoxPlacement.All), h =>
        {
            h.Register(new SinkService(Probe, recordArrivals: true));
            if (h.Self == box || h.Self == idle)
            {
                h.Register(new WorkingService(at, ComputeWork.Merge, 115_000, h.Self == box ? Port.XPlus : null, Probe));
            }
        });
        sim.Start();
        sim.RunUntil(3 * SimTime.Millisecond);

        long work = 100_000; // 115,000 bytes at 9.2 Gbit/s
        int wire = FrameLayout.HeaderSize + 1000 + 24;
        long hop = 500 + 10_000;
        // box -> rack 2 at 10 Gbit/s, rack 2 -> core and core -> rack 0 at 1 Gbit/s, rack 0 -> server at 1 Gbit/s.
        long expected = at + work + ((wire * 8 / 10) + hop) + (3 * ((wire * 8) + hop));
        Assert.Equal(0, wire * 8 % 10);
        var arrival = Assert.Single(Service<SinkService>(sim, server).Arrivals);
        Assert.Equal(expected, arrival.Time);
        Assert.Equal(at + work, Service<WorkingService>(sim, box).LateTimerFiredAt);
        Assert.Equal(work, sim.ComputeBusy(29, ComputeWork.Merge));
        // A server's work stays free: its compute is not priced.
        Assert.Equal(at + 1, Service<WorkingService>(sim, idle).LateTimerFiredAt);
        Assert.Equal(0, sim.ComputeBusy(Servers.IndexOf(idle)));
    }

    [Fact]
    public void ABoxsPortDrawsTheTenGigabitPower()
    {
        using var sim = new Simulation(Options(AggBoxPlacement.Upper) with { Energy = EnergyModel.Legacy });
        sim.Start();
        sim.RunUntil(SimTime.Millisecond);
        var boxNic = sim.Links[27 * Ports.Count];
        var serverNic = sim.Links[0];
        // Legacy: full power all the time, 2.5 W at 10 Gbit/s and 0.5 W at 1 Gbit/s, for 1 ms.
        Assert.Equal(2.5e-3, sim.EnergyOf(boxNic, SimTime.Millisecond), 12);
        Assert.Equal(0.5e-3, sim.EnergyOf(serverNic, SimTime.Millisecond), 12);
    }
}
