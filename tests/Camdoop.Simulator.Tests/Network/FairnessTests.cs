using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;
using Camdoop.Simulator.Tests.Network.Services;
using static Camdoop.Simulator.Tests.Network.SimulationFixture;

namespace Camdoop.Simulator.Tests.Network;

public class FairnessTests
{
    [Theory]
    [InlineData(FrameLayout.MaxPayload, FrameLayout.MaxPayload)]
    [InlineData(FrameLayout.MaxPayload, 1500 - FrameLayout.HeaderSize)]
    [InlineData(200, 4000)]
    public void TwoServicesSaturatingOnePortEachGetHalfOfItsBytes(int payloadA, int payloadB)
    {
        var from = new Coordinate(1, 1, 1);
        using var sim = new Simulation(Options(), h =>
        {
            Port[] ports = h.Self == from ? [Port.ZPlus] : [];
            h.Register(new SaturatingSender(20, payloadA, ports));
            h.Register(new SaturatingSender(21, payloadB, ports));
        });
        sim.Start();
        long duration = 200 * SimTime.Millisecond;
        sim.RunUntil(duration);

        var link = sim.Link(from, Port.ZPlus);
        var receiver = sim.Host(link.To);
        long a = ((SaturatingSender)receiver.GetService(20)!).Received * (payloadA + FrameLayout.HeaderSize);
        long b = ((SaturatingSender)receiver.GetService(21)!).Received * (payloadB + FrameLayout.HeaderSize);
        // Shares of the frame bytes on the link, which is what the round robin equalises.
        double shareA = a / (double)(a + b);
        Assert.InRange(shareA, 0.45, 0.55);
        Assert.InRange(a + b, link.Bytes * 0.99, link.Bytes);
        // And the link stayed busy.
        Assert.InRange(link.Stats.Utilisation(duration), 0.98, 1.0);
    }
}
