using System.Text.Json;
using Camdoop.Cli.Testbed;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Tests.Testbed;

[Collection(TestbedCollection.Name)]
public class TestbedNetworkTests
{
    [RootFact]
    public void CreatesATorusOfNamespacesWithJumboLinksAndRemovesEverything()
    {
        var layout = new TestbedLayout("cdtn", Torus.Parse("2x2x3"), subnet: 201);
        TestbedNetwork.Destroy(layout);
        try
        {
            TestbedNetwork.Create(layout, new LinkShaping("1gbit", 0, 0));
            var namespaces = TestbedNetwork.ListNamespaces().Where(layout.Owns).ToList();
            Assert.Equal(layout.Torus.Count + 1, namespaces.Count);

            foreach (var c in layout.Torus.All())
            {
                var ns = layout.ServerNamespace(c);
                using var links = JsonDocument.Parse(SystemCommand.Ip("-j", "-n", ns, "link", "show"));
                var byName = links.RootElement.EnumerateArray().ToDictionary(l => l.GetProperty("ifname").GetString()!, l => l);
                foreach (var port in Ports.All)
                {
                    var link = byName[TestbedLayout.PortInterface(port)];
                    Assert.Equal(TestbedNetwork.TorusMtu, link.GetProperty("mtu").GetInt32());
                    Assert.Contains("LOWER_UP", link.GetProperty("flags").EnumerateArray().Select(f => f.GetString()));
                }
                var qdisc = SystemCommand.Run("tc", ["-n", ns, "qdisc", "show", "dev", "xplus"]);
                Assert.Contains("tbf", qdisc, StringComparison.Ordinal);
                Assert.Contains("rate 1Gbit", qdisc, StringComparison.Ordinal);
            }

            // The switch network reaches every server's uplink from the host side: a TCP connection from this
            // (root) namespace to a listener bound in the farthest server's namespace.
            var far = layout.Torus.CoordinateOf(layout.Torus.Count - 1);
            var listener = NamespaceSockets.ListenIn(layout.ServerNamespace(far), layout.ServerAddress(far), 7501);
            try
            {
                using var client = new System.Net.Sockets.TcpClient();
                client.Connect(layout.ServerAddress(far), 7501);
                Assert.True(client.Connected);
            }
            finally
            {
                listener.Stop();
            }
        }
        finally
        {
            TestbedNetwork.Destroy(layout);
        }
        Assert.DoesNotContain(TestbedNetwork.ListNamespaces(), layout.Owns);
        // Idempotent: a second teardown finds nothing and does not fail.
        Assert.Equal(0, TestbedNetwork.Destroy(layout));
    }

    /// <summary>
    /// `down` removes its own switch and servers, of any torus size, and nothing else that shares the prefix: the
    /// runtime tests' veth namespaces (<c>cdp-{pid}-1a</c>) once vanished under a concurrent `down --prefix cdp`.
    /// </summary>
    [Theory]
    [InlineData("cdp-switch", true)]
    [InlineData("cdp-0-0-0", true)]
    [InlineData("cdp-7-12-3", true)]
    [InlineData("cdp-12345-1a", false)]
    [InlineData("cdp-1-2", false)]
    [InlineData("cdp-1-2-3-4", false)]
    [InlineData("cdp-1--3", false)]
    [InlineData("cdp-x-0-0", false)]
    [InlineData("cdpx-0-0-0", false)]
    [InlineData("cde-0-0-0", false)]
    [InlineData("cdp-switch2", false)]
    public void DownOwnsOnlyItsSwitchAndServerNamespaces(string netns, bool owned)
    {
        var layout = new TestbedLayout("cdp", Torus.Parse("2x2x2"), subnet: 201);
        Assert.Equal(owned, layout.Owns(netns));
    }
}
