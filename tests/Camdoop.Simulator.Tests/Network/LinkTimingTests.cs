using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;
using static Camdoop.Simulator.Tests.Network.SimulationFixture;

namespace Camdoop.Simulator.Tests.Network;

public class LinkTimingTests
{
    private const byte Probe = 20;

    [Theory]
    [InlineData(0)]
    [InlineData(1000)]
    [InlineData(FrameLayout.MaxPayload)]
    public void AFramesArrivalTimeIsSerialisationPlusPropagationPlusForwarding(int payloadLength)
    {
        using var sim = new Simulation(Options(), h => h.Register(new SinkService(Probe, recordArrivals: true)));
        sim.Start();
        var from = new Coordinate(0, 0, 0);
        long sentAt = 1 * SimTime.Millisecond + 7; // links idle: the start beacons are long gone
        sim.Schedule(sentAt, () => Assert.Equal(SendStatus.Queued, SendNow(sim, from, Port.XPlus, Probe, new byte[payloadLength])));
        sim.RunUntil(2 * SimTime.Millisecond);

        int frameLength = Math.Max(FrameLayout.MinFrameSize, FrameLayout.HeaderSize + payloadLength);
        long expected = sentAt + ((frameLength + 24) * 8) + 500 + 10_000; // 1 Gbps: 8 ns a byte
        var arrival = Assert.Single(Service<SinkService>(sim, new Coordinate(1, 0, 0)).Arrivals);
        Assert.Equal(expected, arrival.Time);
        Assert.Equal(payloadLength, arrival.PayloadLength);
        Assert.Equal(sim.SerialisationTime(frameLength), (frameLength + 24) * 8);
    }

    [Fact]
    public void TimingFollowsTheConfiguredParameters()
    {
        var options = Options() with
        {
            LinkRateBitsPerSecond = 10_000_000_000,
            PropagationDelay = 1234,
            ForwardingLatency = 5 * SimTime.Microsecond,
            FramingOverheadBytes = 20,
        };
        using var sim = new Simulation(options, h => h.Register(new SinkService(Probe, recordArrivals: true)));
        sim.Start();
        var from = new Coordinate(1, 2, 0);
        sim.Schedule(SimTime.Millisecond, () => SendNow(sim, from, Port.ZMinus, Probe, new byte[1000 - FrameLayout.HeaderSize]));
        sim.RunUntil(2 * SimTime.Millisecond);
        // 1,020 wire bytes at 10 Gbps = 816 ns.
        var arrival = Assert.Single(Service<SinkService>(sim, new Coordinate(1, 2, 2)).Arrivals);
        Assert.Equal(SimTime.Millisecond + 816 + 1234 + 5000, arrival.Time);
    }

    [Fact]
    public void BackToBackFramesAreSpacedByTheirSerialisationTime()
    {
        using var sim = new Simulation(Options(), h => h.Register(new SinkService(Probe, recordArrivals: true)));
        sim.Start();
        var from = new Coordinate(2, 1, 1);
        long sentAt = 3 * SimTime.Millisecond;
        sim.Schedule(sentAt, () =>
        {
            var payload = new byte[FrameLayout.MaxPayload];
            for (int i = 0; i < 8; i++)
            {
                BinaryPrimitives.WriteInt32BigEndian(payload, i);
                Assert.Equal(SendStatus.Queued, SendNow(sim, from, Port.YPlus, Probe, payload));
            }
        });
        sim.RunUntil(4 * SimTime.Millisecond);

        var arrivals = Service<SinkService>(sim, new Coordinate(2, 2, 1)).Arrivals;
        Assert.Equal(8, arrivals.Count);
        long serialisation = (9014 + 24) * 8;
        for (int i = 0; i < arrivals.Count; i++)
        {
            Assert.Equal(i, arrivals[i].Sequence);
            Assert.Equal(sentAt + ((i + 1) * serialisation) + 10_500, arrivals[i].Time);
        }
    }

    [Fact]
    public void ASaturatedLinkCarriesOneGigabitPerSecondWithinOnePercent()
    {
        var from = new Coordinate(0, 1, 2);
        using var sim = new Simulation(Options(), h =>
            h.Register(new SaturatingSender(Probe, FrameLayout.MaxPayload, h.Self == from ? [Port.XMinus] : [])));
        sim.Start();
        long duration = 200 * SimTime.Millisecond;
        sim.RunUntil(duration);

        var link = sim.Link(from, Port.XMinus);
        var receiver = Service<SaturatingSender>(sim, link.To);
        // Goodput: each 9,014-byte frame occupies 9,038 bytes of wire time.
        double expectedBytesPerSecond = 1e9 / 8 * 9014 / 9038;
        double measured = link.Bytes / SimTime.ToSeconds(duration);
        Assert.InRange(measured, expectedBytesPerSecond * 0.99, expectedBytesPerSecond * 1.01);
        Assert.InRange(link.Stats.Utilisation(duration), 0.99, 1.0);
        Assert.InRange(receiver.Received * 9014L, link.Bytes - (3 * 9014), link.Bytes);
        Assert.Equal(0, link.Drops);
        // The reverse direction carried only beacons.
        Assert.True(link.Peer.Bytes < 100 * 60);
    }
}
