using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Simulator.Tests.Network.Switched;

public class NetworkTopologyTests
{
    [Fact]
    public void EveryKindHasItsOwnTopologyByName()
    {
        Assert.Equal(["torus", "switch", "racks", "fattree", "netagg", "grin"], NetworkKinds.All.Select(k => k.Name()));
        foreach (var kind in NetworkKinds.All)
        {
            Assert.Equal(kind, kind.Topology().Kind);
            Assert.True(NetworkKinds.TryParse(kind.Name().ToUpperInvariant(), out var parsed));
            Assert.Equal(kind, parsed);
        }
        Assert.Equal(NetworkKinds.All.Count, NetworkKinds.All.Select(k => k.Topology()).Distinct().Count());
        Assert.False(NetworkKinds.TryParse("ring", out _));
    }

    [Fact]
    public void AReportsLabelNamesItsTopology()
    {
        var grin = new SwitchedNetworkOptions { Kind = NetworkKind.Grin, FreePorts = 2 };
        Assert.Equal("grin2", grin.Label);
        Assert.Same(NetworkKind.Grin.Topology(), NetworkKinds.OfLabel(grin.Label));
        Assert.Same(NetworkKind.FatTree.Topology(), NetworkKinds.OfLabel("fattree"));
        Assert.Null(NetworkKinds.OfLabel("ring"));
        Assert.Equal([NetworkKind.Racks, NetworkKind.NetAgg, NetworkKind.Grin], NetworkKinds.All.Where(k => k.Topology().HasOversubscribedRacks));
    }

    [Theory]
    [InlineData(27, 1, 0, 3)] // k = 6 holds 54 host ports: 3 servers per edge switch
    [InlineData(27, 6, 0, 1)] // 162 NICs need k = 10: 5 ports per edge switch, fewer than a server's 6
    [InlineData(27, 1, 8, 4)]
    [InlineData(27, 1, 2, 3)] // a k too small for the NICs is the smallest that holds them
    public void AFatTreesRackIsAnEdgeSwitchsServers(int servers, int nics, int k, int rack)
    {
        var options = new SwitchedNetworkOptions { Kind = NetworkKind.FatTree, NicsPerServer = nics, FatTreeK = k };
        Assert.Equal(rack, options.Topology.RackSize(options, servers));
    }

    [Fact]
    public void TheTorusAlonePricesItsOwnDiameter()
    {
        var torus = new Torus(4, 3, 3);
        Assert.Equal(4, NetworkKind.Torus.Topology().DiameterBound(torus));
        Assert.All(NetworkKinds.All.Skip(1), k => Assert.Equal(6, k.Topology().DiameterBound(torus)));
        Assert.Equal(40, NetworkKind.Racks.Topology().RackSize(new SwitchedNetworkOptions(), 100));
        Assert.Equal(100, NetworkKind.Switch.Topology().RackSize(new SwitchedNetworkOptions(), 100));
    }
}
