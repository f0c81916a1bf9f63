using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Links.Pcap;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Tests.Pcap;

namespace Camdoop.Runtime.Tests.RawEthernet;

/// <summary>
/// What every link driver must do (the <see cref="IRawEthernetLink"/> contract), each test run once per driver: two
/// real nodes over a veth pair between two network namespaces (needs root; the pcap cases need libpcap too). What
/// only one driver does is tested in <see cref="RawEthernetLinkTests"/> and <see cref="PcapLinkTests"/>.
/// </summary>
[Collection(RawEthernetCollection.Name)]
public sealed class LinkDriverContractTests
{
    [Theory]
    [LinkDriverData(LinkDriver.AfPacket)]
    [LinkDriverData(LinkDriver.Pcap)]
    public void FramesOfEverySizeUpTo9014BytesCrossIntactInBothDirections(LinkDriver driver)
    {
        using var nodes = Start(driver);
        nodes.WaitForLinkUp();
        var sizes = Enumerable.Range(0, FrameLayout.MaxPayload + 1).ToArray(); // frames of 60 (padded) to 9,014 bytes

        nodes.SendInWindows(fromA: true, sizes);
        nodes.SendInWindows(fromA: false, sizes);

        foreach (var (loop, name) in new[] { (nodes.LoopA!, "A"), (nodes.LoopB!, "B") })
        {
            var (received, corrupt, fromSelf, distinct, missing, rejected) = nodes.On(loop, () =>
            {
                var s = loop.Host.GetService<PatternService>()!;
                return (s.Received, s.Corrupt, s.FromSelf, s.SizesReceived.Count, sizes.Except(s.SizesReceived).Take(5).ToArray(), loop.Host.Counters.TotalRejected);
            });
            Assert.True(missing.Length == 0, $"{name} never received payload sizes {string.Join(", ", missing)}");
            Assert.Equal(sizes.Length, received);
            Assert.True(sizes.Length == distinct, $"{name} received {distinct} distinct sizes of {sizes.Length}");
            Assert.Equal(0, corrupt);
            Assert.Equal(0, fromSelf);
            Assert.Equal(0, rejected);
        }
        var linkA = nodes.LoopA!.Link(TwoNodes.PortA)!;
        var linkB = nodes.LoopB!.Link(TwoNodes.PortB)!;
        Assert.Equal(driver, linkA.Driver);
        Assert.IsType(TransportType(driver), linkB);
        Assert.Equal(0, linkA.Counters.KernelDrops + linkB.Counters.KernelDrops);
        Assert.Equal(0, linkA.Counters.SendErrors + linkB.Counters.SendErrors);
        // Each side learned the other's MAC from its frames and addresses it directly.
        Assert.Equal(linkB.LocalMac, linkA.PeerMac);
        Assert.Equal(linkA.LocalMac, linkB.PeerMac);
    }

    [Theory]
    [LinkDriverData(LinkDriver.AfPacket)]
    [LinkDriverData(LinkDriver.Pcap)]
    public void ANodeDoesNotReceiveWhatLeavesItsOwnInterface(LinkDriver driver) =>
        AssertNoOwnFrames(driver, new RawEthernetOptions());

    [Theory]
    [LinkDriverData(LinkDriver.AfPacket)]
    [LinkDriverData(LinkDriver.Pcap)]
    public void ANodeDoesNotReceiveWhatLeavesItsOwnInterfaceWithoutTheKernelOption(LinkDriver driver) =>
        AssertNoOwnFrames(driver, new RawEthernetOptions { IgnoreOutgoingInKernel = false });

    [Theory]
    [LinkDriverData(LinkDriver.AfPacket)]
    [LinkDriverData(LinkDriver.Pcap)]
    public void GarbageFramesAreCountedAsRejectedAndTheNodeKeepsWorking(LinkDriver driver)
    {
        using var nodes = Start(driver);
        nodes.WaitForLinkUp();
        var loopA = nodes.LoopA!;
        var linkA = loopA.Link(TwoNodes.PortA)!;
        var garbage = GarbageFrames(out var notCamCube);

        // What each frame should be rejected for, by the codec run here on the same bytes.
        var expected = new long[FrameErrors.Count];
        foreach (var g in garbage)
        {
            var error = FrameCodec.TryRead(g, TwoNodes.Torus, out var header);
            if (error == FrameError.None && header.ServiceId is not WellKnownServices.LinkMonitor and not PatternService.ServiceId)
            {
                error = FrameError.UnknownService;
            }
            Assert.NotEqual(FrameError.None, error); // the test data must be all garbage (fixed seed)
            expected[(int)error]++;
        }
        Assert.Equal(0, nodes.On(loopA, () => loopA.Host.Counters.TotalRejected));

        // Injected on the wire from B's side: random bytes, truncated and oversize frames, lying headers, and frames of
        // another EtherType, which the socket's EtherType (AF_PACKET) or the BPF filter (pcap) must keep out.
        var injectorMac = NetworkNamespace.Run(nodes.Veth.NamespaceB, () =>
        {
            using var injector = PacketSocket.Open(nodes.Veth.InterfaceB, etherType: 0x0800);
            foreach (var g in notCamCube.Concat(garbage))
            {
                injector.Send(g);
            }
            return injector.MacAddress;
        });

        nodes.WaitUntil(loopA, h => h.Counters.TotalRejected >= garbage.Count, $"{garbage.Count} rejections at A; A's link {linkA.Counters}");
        var rejected = nodes.On(loopA, () => loopA.Host.Counters.Rejected.ToArray());
        for (int e = 0; e < FrameErrors.Count; e++)
        {
            Assert.True(expected[e] == rejected[e], $"{(FrameError)e}: expected {expected[e]} rejections, counted {rejected[e]}");
        }
        // Frames of another EtherType never reach the node.
        Assert.True(rejected.Sum() == garbage.Count, $"rejections {rejected.Sum()} != CamCube-typed garbage {garbage.Count}");

        // The node still works: the link stays up, real frames still arrive intact, the peer's address was not
        // taken from any garbage frame.
        var sizes = Enumerable.Range(0, 200).Select(i => i * 45).ToArray();
        nodes.SendInWindows(fromA: false, sizes);
        var (up, received, corrupt) = nodes.On(loopA, () =>
            (loopA.Host.IsLinkUp(TwoNodes.PortA), nodes.ServiceA.Received, nodes.ServiceA.Corrupt));
        Assert.True(up);
        Assert.Equal(sizes.Length, received);
        Assert.Equal(0, corrupt);
        Assert.Equal(injectorMac, linkA.PeerMac); // learned from valid frames only
        Assert.Equal(0, loopA.Faults);
    }

    [Theory]
    [LinkDriverData(LinkDriver.AfPacket)]
    [LinkDriverData(LinkDriver.Pcap)]
    public void BeaconsBringTheLinkUpAndItGoesDownWhenThePeerStopsOrLosesCarrier(LinkDriver driver)
    {
        using var nodes = Start(driver);
        var loopA = nodes.LoopA!;
        var linkA = loopA.Link(TwoNodes.PortA)!;
        // The carrier is read at polls: on a loaded machine the first may come a little after the start.
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!linkA.CarrierUp && clock.Elapsed < TimeSpan.FromSeconds(5))
        {
            Thread.Sleep(20);
        }
        Assert.True(linkA.CarrierUp);

        // Up only once beacons have been heard both ways.
        nodes.WaitForLinkUp();
        Assert.True(nodes.On(loopA, () => loopA.Host.Monitor.HasHeard(TwoNodes.PortA)));

        // The peer's server stops: the cable still has carrier, but its beacons stop, so A declares the link down.
        nodes.LoopB!.Dispose();
        nodes.WaitUntil(loopA, h => !h.IsLinkUp(TwoNodes.PortA), "A's link down after B stopped");
        Assert.True(linkA.CarrierUp);

        // A new server on B brings it back.
        nodes.StartNode(sideA: false);
        nodes.WaitForLinkUp();

        // B's interface goes down: A loses carrier and the link goes down through the carrier path; it comes back.
        nodes.Veth.SetUp(sideA: false, up: false);
        nodes.WaitUntil(loopA, h => !h.HasCarrier(TwoNodes.PortA) && !h.IsLinkUp(TwoNodes.PortA), "A's carrier and link down");
        nodes.Veth.SetUp(sideA: false, up: true);
        nodes.WaitUntil(loopA, h => h.HasCarrier(TwoNodes.PortA) && h.IsLinkUp(TwoNodes.PortA), "A's link up again after carrier returned");
        Assert.Equal(0, loopA.Faults);
    }

    [Theory]
    [LinkDriverData(LinkDriver.AfPacket)]
    [LinkDriverData(LinkDriver.Pcap)]
    public void ALinkFollowsItsInterfaceWhenItIsDeletedAndCreatedAgain(LinkDriver driver)
    {
        using var nodes = Start(driver);
        nodes.WaitForLinkUp();
        var loopA = nodes.LoopA!;
        var linkA = loopA.Link(TwoNodes.PortA)!;
        var oldMac = linkA.LocalMac;

        nodes.Veth.DeletePair();
        nodes.WaitUntil(loopA, h => !h.HasCarrier(TwoNodes.PortA) && !h.IsLinkUp(TwoNodes.PortA), "A's carrier gone with the cable");
        nodes.Veth.CreatePair();

        // Same names, new interfaces (new index, new MAC): both sides re-bind (AF_PACKET) or open new capture handles
        // (pcap), beacons flow, frames cross again.
        nodes.WaitForLinkUp();
        Assert.NotEqual(oldMac, linkA.LocalMac);
        var sizes = Enumerable.Range(0, 100).Select(i => i * 89).ToArray();
        nodes.SendInWindows(fromA: true, sizes);
        Assert.Equal(sizes.Length, nodes.On(nodes.LoopB!, () => nodes.ServiceB.SizesReceived.Count));
        Assert.Equal(nodes.LoopB!.Link(TwoNodes.PortB)!.LocalMac, linkA.PeerMac);
        Assert.Equal(0, loopA.Faults);
    }

    [Theory]
    [LinkDriverData(LinkDriver.AfPacket)]
    [LinkDriverData(LinkDriver.Pcap)]
    public void AShapedLinkPushesBackThroughTheSendBufferInsteadOfDropping(LinkDriver driver)
    {
        using var nodes = Start(driver);
        nodes.WaitForLinkUp();
        nodes.Veth.Shape(sideA: true, megabitsPerSecond: 500);
        var linkA = nodes.LoopA!.Link(TwoNodes.PortA)!;
        var sizes = Enumerable.Repeat(FrameLayout.MaxPayload, 2000).ToArray(); // 18 MB: about 0.3 s at 500 Mbit/s

        // All at once: far more than the send buffer (1 MB) holds, so the loop meets EAGAIN and must wait for POLLOUT.
        nodes.LoopA!.Post(() => nodes.ServiceA.Send(sizes));
        nodes.WaitUntil(nodes.LoopB!, h => h.GetService<PatternService>()!.Received >= sizes.Length, $"{sizes.Length} frames at B; A's link {linkA.Counters}", seconds: 20);

        Assert.True(linkA.Counters.SendBlocked > 0, $"the send buffer never filled: {linkA.Counters}");
        Assert.Equal(0, linkA.Counters.SendErrors);
        Assert.Equal(0, nodes.LoopB!.Link(TwoNodes.PortB)!.Counters.KernelDrops);
        Assert.Equal(0, nodes.On(nodes.LoopB!, () => nodes.ServiceB.Corrupt));
        Assert.True(nodes.On(nodes.LoopA!, () => nodes.LoopA!.Host.IsLinkUp(TwoNodes.PortA))); // beacons got through the queue
    }

    [Theory]
    [LinkDriverData(LinkDriver.AfPacket)]
    [LinkDriverData(LinkDriver.Pcap)]
    public void OpeningFailsClearlyWhenTheMtuIsTooSmallTheInterfaceIsMissingOrCapNetRawIsLacking(LinkDriver driver)
    {
        using var veth = VethLink.Create(mtu: 1500, prefix: Prefix(driver));
        var pool = new FramePool();

        var tooSmall = Assert.Throws<RawEthernetException>(() =>
            NetworkNamespace.Run(veth.NamespaceA, () => OpenDirectly(driver, veth.InterfaceA, pool)));
        Assert.Contains("MTU 1500", tooSmall.Message, StringComparison.Ordinal);
        Assert.Contains("9000", tooSmall.Message, StringComparison.Ordinal);

        var missing = Assert.Throws<RawEthernetException>(() =>
            NetworkNamespace.Run(veth.NamespaceA, () => OpenDirectly(driver, "cdt-nothere", pool)));
        Assert.Contains("cdt-nothere does not exist", missing.Message, StringComparison.Ordinal);

        // Without CAP_NET_RAW (what a non-root process has) the error says what is missing. (A frame size that fits
        // the MTU: pcap checks the MTU before it opens its handle.)
        var unprivileged = Assert.Throws<RawEthernetException>(() => NetworkNamespace.Run(veth.NamespaceA, () =>
            DroppedCapability.RunWithoutNetRaw(() => OpenDirectly(driver, veth.InterfaceA, pool, new RawEthernetOptions { MaxFrameSize = 1514 }))));
        Assert.Contains("needs root or CAP_NET_RAW", unprivileged.Message, StringComparison.Ordinal);

        // The driver is chosen by the options too; a smaller frame size fits the 1,500-byte MTU.
        using var link = NetworkNamespace.Run(veth.NamespaceA, () =>
            RawEthernetLinks.Open(veth.InterfaceA, pool, new RawEthernetOptions { Driver = driver, MaxFrameSize = 1514 }));
        Assert.IsType(TransportType(driver), link);
        Assert.Equal(1500, link.Mtu);
    }

    [Theory]
    [LinkDriverData(LinkDriver.AfPacket)]
    [LinkDriverData(LinkDriver.Pcap)]
    public void FramesLargerThanAConfiguredSmallerMaximumAreDroppedAndCounted(LinkDriver driver)
    {
        using var nodes = Start(driver, mtu: 1500, new RawEthernetOptions { MaxFrameSize = 1514 });
        nodes.WaitForLinkUp();
        var loopA = nodes.LoopA!;
        var sizes = new[] { 0, 1000, 1488, 1489, 5000, 100 }; // 1,488 payload bytes make a 1,514-byte frame

        loopA.Post(() => nodes.ServiceA.Send(sizes));
        nodes.WaitUntil(nodes.LoopB!, h => h.GetService<PatternService>()!.Received >= 4, "4 frames at B");
        nodes.WaitUntil(loopA, _ => loopA.Link(TwoNodes.PortA)!.Counters.OversizeDropped >= 2, "2 oversize drops at A");

        Assert.Equal([0, 100, 1000, 1488], nodes.On(nodes.LoopB!, () => nodes.ServiceB.SizesReceived.Order().ToArray()));
        Assert.Equal(2, loopA.Link(TwoNodes.PortA)!.Counters.OversizeDropped);
    }

    /// <summary>Both nodes on <paramref name="driver"/>, in namespaces named after it (no clash with its own tests).</summary>
    private static TwoNodes Start(LinkDriver driver, int mtu = 9000, RawEthernetOptions? linkOptions = null) =>
        TwoNodes.Start(mtu, linkOptions, driver, prefix: Prefix(driver));

    private static string Prefix(LinkDriver driver) => driver == LinkDriver.Pcap ? PcapLinkTests.Prefix : VethLink.DefaultPrefix;

    private static Type TransportType(LinkDriver driver) => driver == LinkDriver.Pcap ? typeof(PcapTransport) : typeof(RawEthernetTransport);

    /// <summary>The driver's own Open, not the <see cref="RawEthernetLinks"/> switch.</summary>
    private static IRawEthernetLink OpenDirectly(LinkDriver driver, string interfaceName, FramePool pool, RawEthernetOptions? options = null) =>
        driver == LinkDriver.Pcap ? PcapTransport.Open(interfaceName, pool, options) : RawEthernetTransport.Open(interfaceName, pool, options);

    /// <summary>
    /// What A sends never comes back to A, and neither do frames another program sends out of A's interface (outgoing
    /// there, so the driver must keep them out even when the kernel does not).
    /// </summary>
    private static void AssertNoOwnFrames(LinkDriver driver, RawEthernetOptions options)
    {
        using var nodes = Start(driver, linkOptions: options);
        nodes.WaitForLinkUp();
        var loopA = nodes.LoopA!;
        var linkA = loopA.Link(TwoNodes.PortA)!;
        var sizes = Enumerable.Range(0, 2000).Select(i => i % 3 == 0 ? FrameLayout.MaxPayload : i).ToArray();

        nodes.SendInWindows(fromA: true, sizes);
        const int Injected = 50;
        long bReceivedBefore = nodes.LoopB!.Link(TwoNodes.PortB)!.Counters.FramesReceived;
        NetworkNamespace.Run(nodes.Veth.NamespaceA, () =>
        {
            using var other = PacketSocket.Open(nodes.Veth.InterfaceA);
            var frame = new byte[FrameLayout.HeaderSize + 100];
            var header = new FrameHeader(PatternService.ServiceId, TwoNodes.B, TwoNodes.A, ttl: 1);
            int length = FrameCodec.Write(frame, ref header, default, new byte[100]);
            MacAddress.Broadcast.Write(frame);
            new byte[] { 0x02, 0, 0, 0, 0, 0x77 }.CopyTo(frame, 6);
            for (int i = 0; i < Injected; i++)
            {
                other.Send(frame.AsSpan(0, length));
            }
            return 0;
        });
        nodes.WaitUntil(nodes.LoopB!, _ => nodes.LoopB!.Link(TwoNodes.PortB)!.Counters.FramesReceived >= bReceivedBefore + Injected, "the injected frames at B");
        Thread.Sleep(100);

        var (ownDelivered, wiring, rejected, framesIn) = nodes.On(loopA, () =>
            (nodes.ServiceA.Received, loopA.Host.Monitor.WiringErrors, loopA.Host.Counters.TotalRejected, loopA.Host.Counters.FramesReceived[(int)TwoNodes.PortA]));
        long peerSent = nodes.LoopB!.Link(TwoNodes.PortB)!.Counters.FramesSent;
        Assert.Equal(0, ownDelivered); // A's 2,000 frames and the injected ones never came to A's service ...
        Assert.Equal(0, wiring); // ... nor did A's beacons (they would be wiring errors) ...
        Assert.Equal(0, rejected);
        Assert.True(framesIn <= peerSent, $"A received {framesIn} frames but B sent only {peerSent}"); // ... A hears only B.
        if (driver == LinkDriver.Pcap)
        {
            // pcap_setdirection already kept them out. (AF_PACKET without the kernel option drops them by packet type
            // in user space, and counts them there.)
            Assert.Equal(0, linkA.Counters.OwnFramesIgnored);
        }
        Assert.Equal(sizes.Length + Injected, nodes.On(nodes.LoopB!, () => nodes.ServiceB.Received)); // B got them all
    }

    /// <summary>Deterministic garbage with the CamCube EtherType (and some of another type, which must never arrive).</summary>
    private static List<byte[]> GarbageFrames(out List<byte[]> notCamCube)
    {
        var rng = new Random(20251121);
        var frames = new List<byte[]>();
        var src = new byte[] { 0x02, 0, 0, 0, 0, 0x66 }; // a locally administered "attacker" address

        byte[] Frame(int length)
        {
            var f = new byte[length];
            rng.NextBytes(f);
            MacAddress.Broadcast.Write(f);
            src.CopyTo(f, 6);
            BinaryPrimitives.WriteUInt16BigEndian(f.AsSpan(12), FrameLayout.EtherType);
            return f;
        }

        byte[] Valid(int payload, Action<byte[]> spoil)
        {
            var f = new byte[FrameLayout.HeaderSize + payload];
            var header = new FrameHeader(PatternService.ServiceId, TwoNodes.B, TwoNodes.A, ttl: 1);
            FrameCodec.Write(f, ref header, default, new byte[payload]);
            MacAddress.Broadcast.Write(f);
            src.CopyTo(f, 6);
            spoil(f);
            return f;
        }

        for (int i = 0; i < 40; i++)
        {
            frames.Add(Frame(rng.Next(FrameLayout.EthernetHeaderSize, FrameLayout.MaxFrameSize + 1))); // random bytes
        }
        for (int i = 0; i < 10; i++)
        {
            frames.Add(Frame(rng.Next(FrameLayout.EthernetHeaderSize, FrameLayout.HeaderSize))); // truncated
            frames.Add(Valid(100, f => f[14] = 2)); // wrong version
            frames.Add(Valid(100, f => f[16] = 0x08)); // the flag bit no frame may set
            frames.Add(Valid(100, f => BinaryPrimitives.WriteUInt16BigEndian(f.AsSpan(24), 5000))); // payload longer than the frame
            frames.Add(Valid(100, f => f[18] = 7)); // source x outside the 3x3x3 torus
            frames.Add(Valid(100, f => f[15] = 99)); // no such service
        }
        notCamCube = [];
        for (int i = 0; i < 10; i++)
        {
            var f = Frame(200);
            BinaryPrimitives.WriteUInt16BigEndian(f.AsSpan(12), 0x0800);
            notCamCube.Add(f);
        }
        return frames;
    }
}
