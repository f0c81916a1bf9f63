using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links.Pcap;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Tests.RawEthernet;

namespace Camdoop.Runtime.Tests.Pcap;

/// <summary>
/// Two real nodes over a veth pair between two network namespaces, links through libpcap (needs root and libpcap):
/// what only this driver is tested for. What every driver does is in <see cref="LinkDriverContractTests"/>.
/// </summary>
[Collection(RawEthernetCollection.Name)]
public sealed class PcapLinkTests
{
    /// <summary>Names the pcap tests' namespaces, apart from the AF_PACKET tests' and the Cli tests' testbeds.</summary>
    internal const string Prefix = "cdt-pcap-";

    [PcapFact]
    public void APcapNodeAndAnAfPacketNodeTalkOverOneLink()
    {
        using var nodes = TwoNodes.Start(driver: LinkDriver.Pcap, driverB: LinkDriver.AfPacket, prefix: Prefix);
        nodes.WaitForLinkUp();
        Assert.IsType<PcapTransport>(nodes.LoopA!.Link(TwoNodes.PortA));
        Assert.IsType<RawEthernetTransport>(nodes.LoopB!.Link(TwoNodes.PortB));
        var sizes = Enumerable.Range(0, 600).Select(i => i * 15).ToArray();

        nodes.SendInWindows(fromA: true, sizes);
        nodes.SendInWindows(fromA: false, sizes);

        Assert.Equal(sizes.Length, nodes.On(nodes.LoopB!, () => nodes.ServiceB.SizesReceived.Count));
        Assert.Equal(sizes.Length, nodes.On(nodes.LoopA!, () => nodes.ServiceA.SizesReceived.Count));
        Assert.Equal(0, nodes.On(nodes.LoopA!, () => nodes.ServiceA.Corrupt + nodes.LoopA!.Host.Counters.TotalRejected));
        Assert.Equal(0, nodes.On(nodes.LoopB!, () => nodes.ServiceB.Corrupt + nodes.LoopB!.Host.Counters.TotalRejected));
        Assert.Equal(nodes.LoopB!.Link(TwoNodes.PortB)!.LocalMac, nodes.LoopA!.Link(TwoNodes.PortA)!.PeerMac);
        Assert.Equal(nodes.LoopA!.Link(TwoNodes.PortA)!.LocalMac, nodes.LoopB!.Link(TwoNodes.PortB)!.PeerMac);
    }

    [PcapFact]
    public void FramesTheKernelDropsForAFullCaptureRingAreCounted()
    {
        // Two 16 KB slots: a burst of jumbo frames overflows the ring before B's I/O thread empties it.
        using var nodes = Start(linkOptions: new RawEthernetOptions { CaptureBufferBytes = 32 << 10 });
        nodes.WaitForLinkUp();
        var linkA = nodes.LoopA!.Link(TwoNodes.PortA)!;
        var linkB = nodes.LoopB!.Link(TwoNodes.PortB)!;
        var sizes = Enumerable.Repeat(FrameLayout.MaxPayload, 3000).ToArray();

        nodes.LoopA!.Post(() => nodes.ServiceA.Send(sizes));
        nodes.WaitUntil(nodes.LoopA!, _ => nodes.ServiceA.Waiting == 0 && linkA.PendingTransmit == 0, "A to hand every frame to the kernel", seconds: 20);
        // The drop counter is read at carrier polls (every 100 ms or so): wait for the polls that follow the burst,
        // longer on a loaded machine, where B's loop may also still be taking in the last frames.
        long received = 0;
        var clock = System.Diagnostics.Stopwatch.StartNew();
        do
        {
            Thread.Sleep(100);
            received = nodes.On(nodes.LoopB!, () => nodes.ServiceB.Received);
        }
        while (received + linkB.Counters.KernelDrops < sizes.Length && clock.Elapsed < TimeSpan.FromSeconds(10));

        Assert.True(linkB.Counters.KernelDrops > 0, $"nothing dropped; B's link {linkB.Counters}");
        Assert.True(received + linkB.Counters.KernelDrops >= sizes.Length,
            $"{sizes.Length} sent, {received} received, only {linkB.Counters.KernelDrops} counted as dropped");
    }

    private static TwoNodes Start(int mtu = 9000, RawEthernetOptions? linkOptions = null) =>
        TwoNodes.Start(mtu, linkOptions, LinkDriver.Pcap, prefix: Prefix);
}
