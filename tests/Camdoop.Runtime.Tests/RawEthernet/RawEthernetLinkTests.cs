using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Node;

namespace Camdoop.Runtime.Tests.RawEthernet;

/// <summary>
/// Two real nodes over a veth pair between two network namespaces, links through AF_PACKET (needs root): what only
/// this driver is tested for. What every driver does is in <see cref="LinkDriverContractTests"/>.
/// </summary>
[Collection(RawEthernetCollection.Name)]
public sealed class RawEthernetLinkTests
{
    [NetnsFact]
    public void ALinkGoesDownWhenItsPeersNamespaceVanishes()
    {
        using var nodes = TwoNodes.Start();
        nodes.WaitForLinkUp();
        var loopA = nodes.LoopA!;

        // B's server stops and its namespace is deleted: the cable disappears from under A.
        nodes.LoopB!.Dispose();
        nodes.Veth.DeleteNamespaceB();
        nodes.WaitUntil(loopA, h => !h.HasCarrier(TwoNodes.PortA) && !h.IsLinkUp(TwoNodes.PortA), "A's carrier gone with B's namespace");
        Assert.Equal(0, loopA.Faults);
    }

    /// <summary>
    /// A crashed test's veth namespaces are cleared away, but nothing else with the prefix: a testbed's
    /// <c>{prefix}-0-0-0</c> once read as "pid 0, long gone" and vanished from under a running testbed.
    /// </summary>
    [NetnsFact]
    public void OnlyACrashedRunsVethNamespacesCountAsOrphans()
    {
        const string prefix = "cdt-orph-";
        int deadPid = Enumerable.Range(4_000_000, 1000).First(pid => !Directory.Exists($"/proc/{pid}"));
        string orphanA = $"{prefix}{deadPid}-1a", orphanB = $"{prefix}{deadPid}-1b";
        string[] others = [$"{prefix}0-0-0", $"{prefix}{deadPid}-1c", $"{prefix}{deadPid}-x1a", $"{prefix}{Environment.ProcessId}-1a"];
        string[] all = [.. others, orphanA, orphanB];
        try
        {
            foreach (var name in all)
            {
                NetworkNamespace.Create(name);
            }
            NetworkNamespace.DeleteOrphans(prefix);
            Assert.False(NetworkNamespace.Exists(orphanA));
            Assert.False(NetworkNamespace.Exists(orphanB));
            Assert.All(others, name => Assert.True(NetworkNamespace.Exists(name), name));
        }
        finally
        {
            foreach (var name in all)
            {
                NetworkNamespace.Delete(name);
            }
        }
    }

    [NetnsFact]
    public void FramesCarryOurMacAsSourceAndTheLearnedNeighbourAsDestinationAndBeaconsAreBroadcast()
    {
        using var nodes = TwoNodes.Start();
        nodes.WaitForLinkUp();
        var linkA = nodes.LoopA!.Link(TwoNodes.PortA)!;
        var macB = nodes.LoopB!.Link(TwoNodes.PortB)!.LocalMac;
        Assert.Equal(macB, linkA.PeerMac);

        // A second socket on B's interface sees what arrives there, alongside B's node.
        var seen = NetworkNamespace.Run(nodes.Veth.NamespaceB, () =>
        {
            using var sniffer = PacketSocket.Open(nodes.Veth.InterfaceB);
            nodes.LoopA!.Post(() => nodes.ServiceA.Send([10, 20, 30]));
            var frames = new List<(MacAddress Dst, MacAddress Src, byte Service)>();
            var buffer = new byte[FrameLayout.BufferSize];
            while (frames.Count(f => f.Service == PatternService.ServiceId) < 3 || frames.All(f => f.Service != WellKnownServices.LinkMonitor))
            {
                int n = sniffer.Receive(buffer, timeoutMs: 2000);
                Assert.True(n > 0, "no frame within 2 s");
                frames.Add((MacAddress.Read(buffer), MacAddress.Read(buffer.AsSpan(6)), buffer[15]));
            }
            return frames;
        });

        Assert.All(seen, f => Assert.Equal(linkA.LocalMac, f.Src));
        Assert.All(seen.Where(f => f.Service == PatternService.ServiceId), f => Assert.Equal(macB, f.Dst));
        Assert.All(seen.Where(f => f.Service == WellKnownServices.LinkMonitor), f => Assert.Equal(MacAddress.Broadcast, f.Dst));
    }
}
