using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;
using static Camdoop.Simulator.Tests.Network.SimulationFixture;

namespace Camdoop.Simulator.Tests.Network;

public class FailureTests
{
    private const long Ms = SimTime.Millisecond;

    [Fact]
    public void AFailedServerDropsWhatIsSentToItUntilItsNeighbourGivesUp()
    {
        var sender = new Coordinate(0, 0, 0);
        var victim = new Coordinate(1, 0, 0);
        using var sim = new Simulation(Options(), h =>
            h.Register(new SaturatingSender(20, FrameLayout.MaxPayload, h.Self == sender ? [Port.XPlus] : [])));
        sim.Start();
        var victimHost = sim.Host(victim);
        sim.FailServer(victim, 30 * Ms);
        sim.RunUntil(155 * Ms); // between beacon ticks: nothing in the ring

        var link = sim.Link(sender, Port.XPlus);
        Assert.True(link.Drops > 0);
        Assert.Equal(0, link.InFlight);
        Assert.Equal(0, link.Queued);
        // Every frame that crossed the wire was received before the crash or dropped after it.
        Assert.Equal(link.Frames, victimHost.Counters.FramesReceived[(int)Port.XMinus] + link.Drops);
        // Data flowed at line rate until the crash, and stopped once the sender saw the link down.
        var service = Service<SaturatingSender>(sim, victim);
        Assert.InRange(service.Received, (29 * Ms) / ((9014 + 24) * 8), (30 * Ms) / ((9014 + 24) * 8));
        Assert.False(sim.Host(sender).IsLinkUp(Port.XPlus));
        Assert.True(sim.Host(sender).Counters.QueueFlushed > 0);
        // Lost: everything sent between the crash and its detection 30-40 ms later, at line rate.
        Assert.InRange(link.Drops, (30 * Ms) / ((9014 + 24) * 8), (41 * Ms) / ((9014 + 24) * 8));
    }

    [Fact]
    public void ACutLinkLosesTheFramesInItsRingAndOnTheWire()
    {
        var sender = new Coordinate(0, 2, 0);
        using var sim = new Simulation(Options(), h =>
            h.Register(new SaturatingSender(20, FrameLayout.MaxPayload, h.Self == sender ? [Port.ZMinus] : [])));
        sim.Start();
        var link = sim.Link(sender, Port.ZMinus);
        int queuedAtCut = -1, inFlightAtCut = -1;
        long cutAt = (10 * Ms) + 5000;
        sim.Schedule(cutAt, () => (queuedAtCut, inFlightAtCut) = (link.Queued, link.InFlight)); // runs just before the cut
        sim.FailLink(sender, Port.ZMinus, cutAt);
        sim.RunUntil(20 * Ms);

        Assert.Equal(2, queuedAtCut); // the ring was full
        Assert.InRange(inFlightAtCut, 0, 1);
        Assert.Equal(queuedAtCut + inFlightAtCut, link.Drops);
        Assert.Equal(0, link.Queued + link.InFlight);
        Assert.True(sim.StaleEvents > 0); // the lost frames' pending events were voided
        // Frames that finished serialising reached the receiver unless they were on the wire at the cut.
        Assert.Equal(link.Frames - inFlightAtCut, sim.Host(link.To).Counters.FramesReceived[(int)link.ToPort]);
        Assert.False(link.CanSend);
        Assert.True(sim.Host(sender).Counters.QueueFlushed > 0);
        Assert.False(sim.Host(link.To).IsLinkUp(link.ToPort));
    }

    [Fact]
    public void NoFrameLeaksThroughFailuresAndRestores()
    {
        using var sim = new Simulation(Options(), h =>
        {
            h.Register(new SaturatingSender(20, 3000, Ports.All.ToArray()));
            h.Register(new RandomTrafficService(new Xoshiro256StarStar((ulong)h.Torus.IndexOf(h.Self))));
        });
        sim.Start();
        sim.FailServer(new Coordinate(1, 1, 1), 5 * Ms);
        sim.FailLink(new Coordinate(0, 0, 0), Port.XPlus, 7 * Ms);
        sim.RestoreServer(new Coordinate(1, 1, 1), 50 * Ms);
        sim.RestoreLink(new Coordinate(0, 0, 0), Port.XPlus, 60 * Ms);
        sim.FailServer(new Coordinate(2, 0, 1), 70 * Ms);
        sim.RunUntil(80 * Ms);
        Assert.True(sim.FramesInUse > 0);
        Assert.True(sim.LinkTotals.Drops > 0);
        sim.Dispose();
        Assert.Equal(0, sim.FramesInUse);
    }
}
