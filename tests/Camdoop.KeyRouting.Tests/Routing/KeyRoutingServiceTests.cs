using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting.Tests.Routing;

/// <summary>The routing service on one real node host, with the neighbours played by the test.</summary>
public class KeyRoutingServiceTests
{
    private static readonly Torus Cube = new(8, 8, 8);
    private static readonly Coordinate Self = new(4, 4, 4);

    private static byte AllBut(params Port[] down)
    {
        byte bits = LinkStateAdvertisement.AllUp;
        foreach (var p in down)
        {
            bits &= (byte)~(1 << (int)p);
        }
        return bits;
    }

    [Fact]
    public void A_healthy_cube_floods_nothing_and_routes_along_torus_distance()
    {
        var node = new SingleNode(Cube, Self);
        Assert.All(Ports.All.ToArray(), p => Assert.Empty(node.ControlSent(p)));
        Assert.Equal(0, node.Routing.Counters.AdvertisementsOriginated);
        foreach (var c in Cube.All())
        {
            Assert.Equal(Cube.Distance(Self, c), node.Routing.Distance(c));
        }
        Assert.Equal(Cube.Count, node.Routing.ReachableCount);
    }

    [Fact]
    public void A_failed_link_is_advertised_on_the_other_links_and_routed_around()
    {
        var node = new SingleNode(Cube, Self);
        var across = node.Neighbour(Port.XPlus);
        node.Host.OnCarrierChanged(Port.XPlus, false);
        node.RunTimers();
        Assert.Empty(node.ControlSent(Port.XPlus));
        foreach (var p in Ports.All.ToArray().Where(p => p != Port.XPlus))
        {
            var batch = Assert.Single(node.ControlSent(p));
            var lsa = Assert.Single(batch);
            Assert.Equal(new LinkStateAdvertisement(Cube.IndexOf(Self), 0, 1, AllBut(Port.XPlus)), lsa);
        }
        Assert.Equal(3, node.Routing.Distance(across));
        Assert.Equal(0, node.Routing.NextHopPorts(across) & (1 << (int)Port.XPlus));
        Assert.False(node.Routing.IsLinkLive(Self, Port.XPlus));
        Assert.False(node.Routing.IsLinkLive(across, Port.XMinus));
    }

    [Fact]
    public void News_is_kept_and_reflooded_once_except_back_where_it_came_from()
    {
        var node = new SingleNode(Cube, Self);
        var far = new Coordinate(0, 0, 0);
        var news = new LinkStateAdvertisement(Cube.IndexOf(far), 0, 3, AllBut(Port.YMinus));
        node.ReceiveAdvertisements(Port.ZPlus, news);
        Assert.Equal(news, node.Routing.AdvertisementOf(far));
        Assert.Empty(node.ControlSent(Port.ZPlus));
        foreach (var p in Ports.All.ToArray().Where(p => p != Port.ZPlus))
        {
            Assert.Equal([news], Assert.Single(node.ControlSent(p)));
        }
        Assert.False(node.Routing.IsLinkLive(far, Port.YMinus));

        node.ClearSent();
        node.ReceiveAdvertisements(Port.YPlus, news);
        node.ReceiveAdvertisements(Port.YPlus, news with { Sequence = 2, Links = 0 });
        Assert.Empty(node.ControlSent(Port.ZPlus));
        Assert.Empty(node.ControlSent(Port.XMinus));
        // The stale version is answered with the newer one, on the link it came from only.
        Assert.Equal([news], Assert.Single(node.ControlSent(Port.YPlus)));
        Assert.Equal(news, node.Routing.AdvertisementOf(far));
        Assert.Equal(1, node.Routing.Counters.AdvertisementsAccepted);
    }

    [Fact]
    public void Hearing_a_newer_version_of_itself_makes_a_server_outbid_it()
    {
        var node = new SingleNode(Cube, Self);
        int self = Cube.IndexOf(Self);
        node.ReceiveAdvertisements(Port.XMinus, new LinkStateAdvertisement(self, 7, 20, 0));
        var mine = node.Routing.AdvertisementOf(Self);
        Assert.Equal(new LinkStateAdvertisement(self, 7, 21, LinkStateAdvertisement.AllUp), mine);
        foreach (var p in Ports.All)
        {
            Assert.Contains(node.ControlSent(p), batch => batch.Contains(mine));
        }
        // Its own links are what it says they are, not what its previous life said.
        Assert.Equal(Cube.Count, node.Routing.ReachableCount);
    }

    [Fact]
    public void When_a_link_comes_up_the_whole_database_goes_over_it()
    {
        var node = new SingleNode(Cube, Self);
        var known = new LinkStateAdvertisement(Cube.IndexOf(new Coordinate(1, 2, 3)), 0, 5, AllBut(Port.ZPlus));
        node.ReceiveAdvertisements(Port.YMinus, known);
        node.Host.OnCarrierChanged(Port.XMinus, false);
        node.ClearSent();
        node.Host.OnCarrierChanged(Port.XMinus, true); // carrier back; the beacon exchange brings the link up
        node.Receive(Port.XMinus, WellKnownServices.LinkMonitor, FrameFlags.None, Beacon(Port.XPlus));
        Assert.True(node.Host.IsLinkUp(Port.XMinus));
        var sent = node.ControlSent(Port.XMinus).SelectMany(b => b).ToList();
        var own = node.Routing.AdvertisementOf(Self);
        Assert.Equal(2u, own.Sequence); // down, then up again
        Assert.Equal(LinkStateAdvertisement.AllUp, own.Links);
        Assert.Contains(own, sent);
        Assert.Contains(known, sent);
    }

    [Fact]
    public void Isolating_a_server_makes_it_unreachable_moves_its_keys_and_tells_listeners_once()
    {
        var node = new SingleNode(Cube, Self);
        var listener = new RecordingListener();
        node.Routing.AddOwnershipListener(listener);
        var victim = new Coordinate(1, 1, 1);
        var key = Key.FromCoordinate(Cube, victim, Key.FromString("job"));
        Assert.Equal(victim, node.Routing.Owner(key));
        // Its six neighbours all say their link to it is down.
        var entries = Ports.All.ToArray()
            .Select(p => new LinkStateAdvertisement(Cube.IndexOf(Cube.Neighbour(victim, p)), 0, 1, AllBut(p.Opposite())))
            .ToArray();
        node.ReceiveAdvertisements(Port.XMinus, entries);
        Assert.Empty(listener.Changes); // notified from a timer, never inside the frame callback
        node.RunTimers();
        var change = Assert.Single(listener.Changes);
        Assert.Equal([victim], change.BecameUnreachable);
        Assert.Empty(change.BecameReachable);
        Assert.Equal(Cube.Count - 1, change.ReachableCount);
        Assert.False(node.Routing.IsReachable(victim));
        Assert.Equal(-1, node.Routing.Distance(victim));
        var heir = node.Routing.Owner(key);
        Assert.Equal(1, Cube.Distance(victim, heir));
        Assert.Equal(SendStatus.Unreachable, node.Routing.RouteTo(node.Sink.Id, victim, [1, 2, 3], out _));
        Assert.Equal(1, node.Routing.Counters.Recomputations - 1); // one recomputation for the whole batch (plus the one at start)

        // One neighbour says its link is back (and the victim, rebooted, says so too): reachable again.
        var back = Cube.Neighbour(victim, Port.XPlus);
        node.ReceiveAdvertisements(Port.XMinus,
            new LinkStateAdvertisement(Cube.IndexOf(back), 0, 2, LinkStateAdvertisement.AllUp),
            new LinkStateAdvertisement(Cube.IndexOf(victim), 99, 1, AllBut(Port.XMinus, Port.YPlus, Port.YMinus, Port.ZPlus, Port.ZMinus)));
        node.RunTimers();
        Assert.Equal(2, listener.Changes.Count);
        Assert.Equal([victim], listener.Changes[1].BecameReachable);
        Assert.Equal(victim, node.Routing.Owner(key));
        Assert.Equal(Cube.Distance(Self, back) + 1, node.Routing.Distance(victim));
    }

    [Fact]
    public void Frames_for_this_server_are_delivered_locally_and_others_are_forwarded_along_a_shortest_path()
    {
        var node = new SingleNode(Cube, Self);
        var mine = Key.FromCoordinate(Cube, Self, Key.FromString("local"));
        Assert.Equal(SendStatus.Queued, node.Routing.Route(node.Sink.Id, mine, [7, 7], out _));
        node.RunTimers();
        var (header, payload) = Assert.Single(node.Sink.Received);
        Assert.True(header.IsKeyRouted);
        Assert.Equal(new byte[] { 7, 7 }, payload);

        // A transit frame for a key owned two hops away along +Y.
        var target = new Coordinate(4, 6, 4);
        var key = Key.FromCoordinate(Cube, target, Key.FromString("transit"));
        var keyBytes = new byte[Key.Size];
        key.Write(keyBytes);
        node.Receive(Port.YMinus, node.Sink.Id, FrameFlags.KeyRouted, [1], keyBytes, source: new Coordinate(4, 2, 4), destination: target, ttl: 10);
        var forwarded = Assert.Single(node.Links[(int)Port.YPlus].Sent, f => f[15] == node.Sink.Id);
        Assert.Equal(9, forwarded[17]); // TTL decremented
        Assert.Equal(1, node.Routing.Counters.Forwarded);
        Assert.Single(node.Sink.Received);
    }

    [Fact]
    public void A_payload_written_into_a_frame_is_routed_without_a_copy_and_a_local_one_is_delivered_and_released()
    {
        var node = new SingleNode(Cube, Self);
        var payload = Enumerable.Range(0, 1500).Select(i => (byte)(i * 13)).ToArray();
        Frame Fill()
        {
            var frame = node.Host.Frames.Rent();
            payload.CopyTo(frame.Buffer.AsSpan(FrameLayout.PayloadOffset(keyRouted: true)));
            return frame;
        }
        long inUse = node.Host.Frames.InUse;

        // Owned two hops away along +Y: it leaves on +Y with the headers written around the payload.
        var target = new Coordinate(4, 6, 4);
        var key = Key.FromCoordinate(Cube, target, Key.FromString("in place"));
        Assert.Equal(SendStatus.Queued, node.Routing.Route(node.Sink.Id, key, Fill(), payload.Length, preferred: null, out var port));
        Assert.Equal(Port.YPlus, port);
        var sent = Assert.Single(node.Links[(int)Port.YPlus].Sent, f => f[15] == node.Sink.Id);
        Assert.Equal(FrameError.None, FrameCodec.TryRead(sent, Cube, out var header));
        Assert.True(header.IsKeyRouted);
        Assert.Equal(target, header.Destination);
        Assert.Equal(payload, FrameCodec.Payload(sent, header).ToArray());
        var keyBytes = new byte[Key.Size];
        key.Write(keyBytes);
        Assert.Equal(keyBytes, FrameCodec.Key(sent, header).ToArray());

        // Owned here: delivered as if it had arrived, and the frame goes back to the pool.
        var mine = Key.FromCoordinate(Cube, Self, Key.FromString("local"));
        Assert.Equal(SendStatus.Queued, node.Routing.Route(node.Sink.Id, mine, Fill(), payload.Length, preferred: null, out _));
        node.RunTimers();
        var (local, received) = Assert.Single(node.Sink.Received);
        Assert.True(local.IsKeyRouted);
        Assert.Equal(payload, received);
        Assert.Equal(inUse, node.Host.Frames.InUse);
        Assert.Equal(2, node.Routing.Counters.Originated);
    }

    [Fact]
    public void A_preferred_port_is_taken_when_it_starts_a_shortest_path_and_ignored_otherwise()
    {
        // On a ring of two, +X and -X both reach the same neighbour: the caller's choice decides.
        var ring = new Torus(2, 3, 3);
        var node = new SingleNode(ring, new Coordinate(0, 0, 0));
        var key = Key.FromCoordinate(ring, new Coordinate(1, 0, 0), Key.FromString("parent"));
        foreach (var preferred in new[] { Port.XPlus, Port.XMinus })
        {
            Assert.Equal(SendStatus.Queued, node.Routing.Route(node.Sink.Id, key, [1], preferred, out var port));
            Assert.Equal(preferred, port);
            Assert.Single(node.Links[(int)preferred].Sent, f => f[15] == node.Sink.Id);
            node.ClearSent();
        }
        // +Y does not lead towards (1,0,0): the shortest path is taken instead.
        Assert.Equal(SendStatus.Queued, node.Routing.Route(node.Sink.Id, key, [1], Port.YPlus, out var other));
        Assert.True(other is Port.XPlus or Port.XMinus, $"left on {other}");
        Assert.DoesNotContain(node.Links[(int)Port.YPlus].Sent, f => f[15] == node.Sink.Id);
    }

    [Fact]
    public void A_frame_whose_ttl_runs_out_is_dropped_and_counted()
    {
        var node = new SingleNode(Cube, Self);
        var target = new Coordinate(4, 6, 4);
        node.Receive(Port.YMinus, node.Sink.Id, FrameFlags.CoordinateRouted, [1], source: new Coordinate(4, 2, 4), destination: target, ttl: 1);
        Assert.Equal(1, node.Routing.Counters.DroppedTtl);
        Assert.Equal(1, node.Host.Counters.RejectedFor(FrameError.TtlExpired));
        Assert.DoesNotContain(node.Links[(int)Port.YPlus].Sent, f => f[15] == node.Sink.Id);
    }

    [Fact]
    public void Malformed_control_frames_are_counted_and_change_nothing()
    {
        var node = new SingleNode(Cube, Self);
        node.Receive(Port.XPlus, WellKnownServices.KeyRouting, FrameFlags.None, [1, 0, 5, 0, 0]);
        node.Receive(Port.XPlus, WellKnownServices.KeyRouting, FrameFlags.None, [42]);
        var badEntry = new byte[LinkStateMessage.SizeFor(1)];
        LinkStateMessage.WriteHeader(badEntry, 1);
        badEntry[3] = 200; // x outside the torus
        node.Receive(Port.XPlus, WellKnownServices.KeyRouting, FrameFlags.None, badEntry);
        Assert.Equal(3, node.Routing.Counters.MalformedControl);
        Assert.Equal(Cube.Count, node.Routing.ReachableCount);
        Assert.All(Ports.All.ToArray(), p => Assert.Empty(node.ControlSent(p)));
    }

    [Fact]
    public void The_periodic_refresh_sends_the_database_to_every_neighbour_with_jitter()
    {
        long interval = 1_000_000_000;
        var node = new SingleNode(Cube, Self, new KeyRoutingOptions { RefreshInterval = interval });
        node.RunTimers(interval * 5);
        int refreshes = node.ControlSent(Port.ZMinus).Count;
        Assert.InRange(refreshes, 4, 6);
        Assert.All(node.ControlSent(Port.ZMinus), b => Assert.Equal([node.Routing.AdvertisementOf(Self)], b));
    }

    private static byte[] Beacon(Port senderPort)
    {
        var payload = new byte[8];
        System.Buffers.Binary.BinaryPrimitives.WriteUInt32BigEndian(payload, 0xCA3D_00B1);
        payload[4] = (byte)senderPort;
        return payload;
    }

    private sealed class RecordingListener : IOwnershipListener
    {
        public List<OwnershipChange> Changes { get; } = [];

        public void OnOwnershipChanged(OwnershipChange change) => Changes.Add(change);
    }
}
