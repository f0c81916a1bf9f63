using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Energy;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;
using static Camdoop.Simulator.Tests.Network.SimulationFixture;

namespace Camdoop.Simulator.Tests.Energy;

/// <summary>
/// One link direction's energy and timing under each model, against sums worked out by hand from 802.3az at 1 Gbit/s
/// (T_w = 16.5 us, T_s = 182 us, 0.5 W per port, a tenth of it in low-power idle).
/// </summary>
public class LinkEnergyTests
{
    private const byte Probe = 20;
    private const long Ms = SimTime.Millisecond;
    private const long Tw = 16_500;
    private const long Ts = 182_000;
    private const double Watts = 0.5;
    private const long Delay = 500 + 10_000; // propagation + forwarding
    private const int FrameLength = 1000;
    private const long Serialisation = (FrameLength + 24) * 8; // 1 Gbit/s: 8 ns a byte
    private static readonly Coordinate From = new(0, 0, 0);
    private static readonly Coordinate To = new(1, 0, 0);

    // Beacons only at boot: afterwards a link carries exactly what a test sends on it.
    private static SimulationOptions EnergyOptions(EnergyModel model, int ringDepth = 2) => Options() with
    {
        Energy = model,
        TransmitRingDepth = ringDepth,
        Node = SimulationOptions.DefaultNodeOptions with { BeaconInterval = 1000 * Ms },
    };

    private static Simulation Start(SimulationOptions options)
    {
        var sim = new Simulation(options, h => h.Register(new SinkService(Probe, recordArrivals: true)));
        sim.Start();
        return sim;
    }

    private static void SendAt(Simulation sim, long at, int count = 1) => sim.Schedule(at, () =>
    {
        for (int i = 0; i < count; i++)
        {
            Assert.Equal(SendStatus.Queued, SendNow(sim, From, Port.XPlus, Probe, new byte[FrameLength - FrameLayout.HeaderSize]));
        }
    });

    private static List<long> Arrivals(Simulation sim) => [.. Service<SinkService>(sim, To).Arrivals.Select(a => a.Time)];

    /// <summary>A port whose frames all went out alone: each paid T_w + its serialisation + T_s at full power, the rest was idle.</summary>
    private static double IsolatedFramesJoules(SimulatedLink link, long end) =>
        (0.1 * Watts * end / 1e9) + (0.9 * Watts * ((link.Frames * (Tw + Ts)) + ((link.Bytes + (24 * link.Frames)) * 8)) / 1e9);

    [Fact]
    public void IsolatedFramesPayAWakeAndASleepEachToTheNanojoule()
    {
        using var sim = Start(EnergyOptions(EnergyModel.Eee));
        SendAt(sim, 1 * Ms);
        SendAt(sim, 3 * Ms);
        SendAt(sim, 5 * Ms);
        sim.RunUntil(8 * Ms);

        var link = sim.Link(From, Port.XPlus);
        Assert.Equal(4, link.Frames); // the boot beacon and three probes
        // By hand: three 1,000-byte frames and one beacon, each T_w + T_s + its own time at full power.
        long beacon = (link.Bytes - (3 * FrameLength) + 24) * 8;
        long full = (4 * (Tw + Ts)) + (3 * Serialisation) + beacon;
        double expected = ((Watts * full) + (0.1 * Watts * ((8 * Ms) - full))) / 1e9;
        Assert.Equal(expected, sim.EnergyOf(link, 8 * Ms), 9);
        // Every other port carried its boot beacon alone.
        var energy = sim.MeasureEnergy(8 * Ms);
        double others = sim.Links.Where(l => l != link).Sum(l => IsolatedFramesJoules(l, 8 * Ms));
        Assert.Equal(expected + others, energy.Joules, 9);
        Assert.Equal(energy.Joules, energy.ByKind.TorusLinks, 9);
        Assert.Equal(27 * 6, energy.Ports);
        Assert.Equal("eee", energy.Model);
    }

    [Fact]
    public void AFrameAtASleepingLinkWaitsExactlyTheWakeTime()
    {
        using var sim = Start(EnergyOptions(EnergyModel.Eee));
        SendAt(sim, 1 * Ms);
        sim.RunUntil(2 * Ms);
        Assert.Equal([Ms + Tw + Serialisation + Delay], Arrivals(sim));
    }

    [Fact]
    public void AFrameWhileTheLinkGoesToSleepWaitsForTheSleepThenTheWake()
    {
        using var sim = Start(EnergyOptions(EnergyModel.Eee));
        SendAt(sim, 1 * Ms);
        long firstEnd = Ms + Tw + Serialisation;
        SendAt(sim, firstEnd + (50 * SimTime.Microsecond)); // 50 us into the 182 us sleep
        sim.RunUntil(2 * Ms);
        Assert.Equal([firstEnd + Delay, firstEnd + Ts + Tw + Serialisation + Delay], Arrivals(sim));
    }

    [Fact]
    public void BackToBackFramesPayOneWake()
    {
        using var sim = Start(EnergyOptions(EnergyModel.Eee));
        SendAt(sim, 1 * Ms, count: 4);
        sim.RunUntil(2 * Ms);
        long first = Ms + Tw;
        Assert.Equal([.. Enumerable.Range(1, 4).Select(i => first + (i * Serialisation) + Delay)], Arrivals(sim));
        Assert.Equal(2, sim.Link(From, Port.XPlus).Eee!.Wakes); // the boot beacon's and the burst's
    }

    [Theory]
    [InlineData("legacy")]
    [InlineData("ideal")]
    public void LegacyAndIdealLeaveEveryTimeAsItIs(string model)
    {
        using var sim = Start(EnergyOptions(EnergyModel.Parse(model)));
        SendAt(sim, 1 * Ms);
        SendAt(sim, 1 * Ms + 1000, count: 2);
        sim.RunUntil(2 * Ms);
        Assert.Equal([Ms + Serialisation + Delay, Ms + (2 * Serialisation) + Delay, Ms + (3 * Serialisation) + Delay], Arrivals(sim));
    }

    [Fact]
    public void ALinkBusyAllAlongDrawsFullPowerUnderEeeAsUnderLegacy()
    {
        double Busy(EnergyModel model, out SimulatedLink link)
        {
            var options = EnergyOptions(model);
            using var sim = new Simulation(options, h => h.Register(h.Self == From
                ? new SaturatingSender(Probe, FrameLayout.MaxPayload, [Port.XPlus])
                : new SinkService(Probe)));
            sim.Start();
            sim.RunUntil(5 * Ms);
            link = sim.Link(From, Port.XPlus);
            return sim.EnergyOf(link, 5 * Ms);
        }

        double eee = Busy(EnergyModel.Eee, out var eeeLink);
        double legacy = Busy(EnergyModel.Legacy, out _);
        Assert.Equal(Watts * 0.005, legacy, 12);
        Assert.Equal(Watts * 0.005, eee, 12);
        Assert.Equal(1, eeeLink.Eee!.Wakes);
        Assert.True(eeeLink.BusyTime > (5 * Ms) - Tw - (2 * (9014 + 24) * 8), $"busy {eeeLink.BusyTime} ns");
    }

    [Fact]
    public void APortThatNeverCarriesAFrameDrawsIdlePowerUnderEeeAndFullUnderLegacy()
    {
        // Behind a switch, the servers' boot beacons go nowhere: the switch's ports never send a frame.
        (double Switch, double Legacy) Run(EnergyModel model)
        {
            var options = new SimulationOptions
            {
                Torus = new Torus(2, 2, 2),
                Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch },
                Energy = model,
            };
            using var sim = new Simulation(options, h => h.Register(new SinkService(Probe)));
            sim.Start();
            sim.RunUntil(10 * Ms);
            var ports = sim.Switches.Single().Ports;
            Assert.All(ports, p => Assert.Equal(0, p.Frames));
            var energy = sim.MeasureEnergy(10 * Ms);
            Assert.Equal(16, energy.Ports);
            foreach (var p in ports)
            {
                Assert.Equal(energy.ByKind.SwitchPorts / 8, sim.EnergyOf(p, 10 * Ms), 12);
            }
            return (energy.ByKind.SwitchPorts, energy.LegacyJoules / 2);
        }

        var eee = Run(EnergyModel.Eee);
        var legacy = Run(EnergyModel.Legacy);
        Assert.Equal(8 * 0.1 * Watts * 0.010, eee.Switch, 12);
        Assert.Equal(8 * Watts * 0.010, legacy.Switch, 12);
        Assert.Equal(legacy.Switch, legacy.Legacy, 12);
    }

    [Fact]
    public void CoalescingHoldsALoneFrameForTheHoldTime()
    {
        var model = EnergyModel.Parse("eee:120us3");
        using var sim = Start(EnergyOptions(model, ringDepth: 16));
        SendAt(sim, 1 * Ms);
        sim.RunUntil(2 * Ms);
        Assert.Equal([Ms + (120 * SimTime.Microsecond) + Tw + Serialisation + Delay], Arrivals(sim));
        // The hold is spent in low-power idle: the frames are still isolated.
        var link = sim.Link(From, Port.XPlus);
        Assert.Equal(IsolatedFramesJoules(link, 2 * Ms), sim.EnergyOf(link, 2 * Ms), 9);
    }

    [Fact]
    public void CoalescingWakesTheLinkWhenThePacketTriggerIsReached()
    {
        var model = EnergyModel.Parse("eee:120us3");
        using var sim = Start(EnergyOptions(model, ringDepth: 16));
        SendAt(sim, 1 * Ms);
        SendAt(sim, 1 * Ms + (10 * SimTime.Microsecond));
        SendAt(sim, 1 * Ms + (20 * SimTime.Microsecond)); // the third frame: wake now
        sim.RunUntil(2 * Ms);
        long start = Ms + (20 * SimTime.Microsecond) + Tw;
        Assert.Equal([start + Serialisation + Delay, start + (2 * Serialisation) + Delay, start + (3 * Serialisation) + Delay], Arrivals(sim));
    }

    [Fact]
    public void CoalescingWakesTheLinkWhenItsQueueIsFull()
    {
        // A NIC ring of two frames cannot hold a hundred: the second frame wakes the link.
        var model = EnergyModel.Parse("eee:120us100");
        using var sim = Start(EnergyOptions(model, ringDepth: 2));
        SendAt(sim, 1 * Ms);
        SendAt(sim, 1 * Ms + (10 * SimTime.Microsecond));
        sim.RunUntil(2 * Ms);
        long start = Ms + (10 * SimTime.Microsecond) + Tw;
        Assert.Equal([start + Serialisation + Delay, start + (2 * Serialisation) + Delay], Arrivals(sim));
    }
}
