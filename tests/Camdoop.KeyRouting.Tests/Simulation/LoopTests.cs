using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting.Tests.Simulation;

public class LoopTests
{
    /// <summary>A deliberately wrong router (test double): sends every transit frame back where it came from.</summary>
    private sealed class BouncingRouter(NodeHost host, KeyRoutingService real) : IKeyRouter
    {
        public long Bounced { get; private set; }

        public long ExpiredHere { get; private set; }

        public void OnKeyRoutedFrame(in InboundFrame frame)
        {
            if (frame.IsLocal || frame.Header.Destination == host.Self)
            {
                real.OnKeyRoutedFrame(frame);
                return;
            }
            switch (host.TryForward(frame, frame.ArrivalPort))
            {
                case SendStatus.Queued:
                    Bounced++;
                    break;
                case SendStatus.TtlExpired:
                    ExpiredHere++;
                    break;
            }
        }
    }

    [Fact]
    public void A_routing_loop_is_cut_by_the_ttl_and_counted()
    {
        var source = new Coordinate(0, 0, 0);
        var middle = new Coordinate(1, 0, 0);
        var target = new Coordinate(2, 0, 0); // the only shortest path is source -> middle -> target
        BouncingRouter? wrong = null;
        using var cube = new RoutedCube(new Torus(8, 8, 8), extra: host =>
        {
            if (host.Self == middle)
            {
                wrong = new BouncingRouter(host, host.GetService<KeyRoutingService>()!);
                host.SetKeyRouter(wrong);
            }
        });
        var key = Key.FromCoordinate(cube.Torus, target, Key.FromString("loop"));
        var routing = cube.Routing(source);
        cube.Sim.Schedule(RoutedCube.Ms, () => Assert.Equal(SendStatus.Queued, cube.ProbeAt(source).SendToKey(1, key)));
        cube.Sim.RunUntil(20 * RoutedCube.Ms);

        Assert.Empty(cube.ProbeAt(target).Received);
        long expired = routing.Counters.DroppedTtl + wrong!.ExpiredHere;
        Assert.Equal(1, expired);
        Assert.Equal(1, cube.Sim.Host(source).Counters.RejectedFor(FrameError.TtlExpired) + cube.Sim.Host(middle).Counters.RejectedFor(FrameError.TtlExpired));
        // The frame went back and forth until its TTL ran out: every crossing but the first was a forward.
        Assert.Equal(routing.InitialTtl - 2, routing.Counters.Forwarded + wrong.Bounced);
    }
}
