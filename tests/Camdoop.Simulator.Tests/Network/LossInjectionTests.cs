using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;
using static Camdoop.Simulator.Tests.Network.SimulationFixture;

namespace Camdoop.Simulator.Tests.Network;

public class LossInjectionTests
{
    private const long Ms = SimTime.Millisecond;

    [Fact]
    public void RandomLossDropsAboutTheConfiguredFractionOnThatLinkOnly()
    {
        var sender = new Coordinate(1, 0, 2);
        using var sim = new Simulation(Options(), h =>
            h.Register(new SaturatingSender(20, 1000, h.Self == sender ? [Port.XPlus, Port.XMinus] : [], limit: 10_000)));
        sim.Start();
        var lossy = sim.Link(sender, Port.XPlus);
        lossy.LossRate = 0.1;
        sim.RunUntil(200 * Ms);

        var clean = sim.Link(sender, Port.XMinus);
        Assert.Equal(10_000, Service<SaturatingSender>(sim, clean.To).Received);
        long delivered = Service<SaturatingSender>(sim, lossy.To).Received;
        Assert.InRange(delivered, 8_800, 9_200);
        Assert.Equal(0, clean.Drops);
        // Beacons share the link and the loss; data and beacon drops together account for every lost frame.
        long beaconsReceived = sim.Host(lossy.To).Counters.FramesReceived[(int)lossy.ToPort] - delivered;
        Assert.Equal(lossy.Frames, delivered + beaconsReceived + lossy.Drops);
        Assert.InRange(lossy.Drops / (double)lossy.Frames, 0.08, 0.12);
    }

    [Fact]
    public void TheDropFilterLosesExactlyTheFramesItPicks()
    {
        var sender = new Coordinate(0, 0, 1);
        using var sim = new Simulation(Options(), h =>
            h.Register(new SaturatingSender(20, 100, h.Self == sender ? [Port.ZPlus] : [], limit: 50)));
        sim.DropFilter = (link, frame) =>
        {
            if (link.From != sender || link.Port != Port.ZPlus
                || FrameCodec.TryRead(frame.Span, sim.Torus, out var header) != FrameError.None || header.ServiceId != 20)
            {
                return false;
            }
            int sequence = BinaryPrimitives.ReadInt32BigEndian(FrameCodec.Payload(frame.Span, header));
            return sequence is 5 or 17;
        };
        sim.Start();
        var receiver = Service<SaturatingSender>(sim, sim.Torus.Neighbour(sender, Port.ZPlus));
        receiver.ReceivedSequences = [];
        sim.RunUntil(10 * Ms);

        Assert.Equal(Enumerable.Range(0, 50).Where(i => i is not (5 or 17)), receiver.ReceivedSequences);
        Assert.Equal(2, sim.Link(sender, Port.ZPlus).Drops);
        Assert.Equal(2, sim.LinkTotals.Drops);
    }

    [Fact]
    public void LossRatesAreValidated()
    {
        using var sim = new Simulation(Options());
        Assert.Throws<ArgumentOutOfRangeException>(() => sim.SetLossRate(1.5));
        Assert.Throws<ArgumentOutOfRangeException>(() => new Simulation(Options() with { LossRate = -0.1 }));
        sim.SetLossRate(0.25);
        Assert.All(sim.Links, l => Assert.Equal(0.25, l.LossRate));
    }
}
