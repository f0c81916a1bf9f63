using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;
using Camdoop.Tests.Shared;
using static Camdoop.Simulator.Tests.Network.SimulationFixture;

namespace Camdoop.Simulator.Tests.Network;

/// <summary>A service's rate limit on a simulated 1 Gbps link: it holds, and the other service gets the rest.</summary>
public class RateLimitTests
{
    private static readonly Coordinate From = new(1, 1, 1);

    [Theory]
    [InlineData(200_000_000, FrameLayout.MaxPayload)]
    [InlineData(50_000_000, FrameLayout.MaxPayload)]
    [InlineData(500_000_000, 1500 - FrameLayout.HeaderSize)]
    public void ALimitedServiceGetsItsRateAndTheOtherTheRestOfTheLink(long limitBits, int payload)
    {
        using var sim = new Simulation(Options(), h =>
        {
            Port[] ports = h.Self == From ? [Port.ZPlus] : [];
            h.Register(new SaturatingSender(20, payload, ports));
            h.Register(new SaturatingSender(21, payload, ports));
            h.SetRateLimit(20, Port.ZPlus, limitBits / 8);
        });
        sim.Start();
        var host = sim.Host(From);
        var link = sim.Link(From, Port.ZPlus);

        // A window well after the start (the bucket's initial burst is long spent).
        long start = 50 * SimTime.Millisecond;
        long end = 250 * SimTime.Millisecond;
        sim.RunUntil(start);
        long limited0 = host.QueueCounters(20, Port.ZPlus).BytesSent;
        long other0 = host.QueueCounters(21, Port.ZPlus).BytesSent;
        var link0 = link.Stats;
        sim.RunUntil(end);
        double seconds = (end - start) / 1e9;
        long limited = host.QueueCounters(20, Port.ZPlus).BytesSent - limited0;
        long other = host.QueueCounters(21, Port.ZPlus).BytesSent - other0;
        long linkBytes = link.Stats.Bytes - link0.Bytes;

        double rate = limited * 8 / seconds;
        Assert.InRange(rate, limitBits * 0.95, limitBits * 1.05);
        // The link stayed busy (a frame on the wire at either edge of the window counts whole), and everything on it but the limited service's bytes was the other's.
        Assert.InRange(link.Stats.BusyTime - link0.BusyTime, (end - start) * 0.98, (end - start) * 1.001);
        Assert.InRange(limited + other, linkBytes * 0.99, linkBytes * 1.01);
        Assert.True(other > limited, $"the other service got {other} bytes, the limited one {limited}");
    }

    [Fact]
    public void ALimitAboveTheFairShareChangesNothing()
    {
        using var sim = new Simulation(Options(), h =>
        {
            Port[] ports = h.Self == From ? [Port.ZPlus] : [];
            h.Register(new SaturatingSender(20, FrameLayout.MaxPayload, ports));
            h.Register(new SaturatingSender(21, FrameLayout.MaxPayload, ports));
            h.SetRateLimit(20, Port.ZPlus, 900_000_000 / 8);
        });
        sim.Start();
        var host = sim.Host(From);
        sim.RunUntil(200 * SimTime.Millisecond);
        long a = host.QueueCounters(20, Port.ZPlus).BytesSent;
        long b = host.QueueCounters(21, Port.ZPlus).BytesSent;
        Assert.InRange(a / (double)(a + b), 0.49, 0.51);
    }

    [Fact]
    public void LimitedTrafficAllocatesNothing()
    {
        using var sim = new Simulation(Options(), h =>
        {
            h.Register(new SaturatingSender(20, FrameLayout.MaxPayload, Ports.All.ToArray()));
            foreach (var port in Ports.All)
            {
                h.SetRateLimit(20, port, 300_000_000 / 8);
            }
        });
        sim.Start();
        sim.RunUntil(20 * SimTime.Millisecond);
        long least = ThreadAllocations.LeastOf(5, pass =>
        {
            long events = sim.EventsProcessed;
            sim.RunUntil((20 + (20 * pass)) * SimTime.Millisecond);
            Assert.True(sim.EventsProcessed - events > 10_000);
        });
        Assert.Equal(0, least);
    }
}
