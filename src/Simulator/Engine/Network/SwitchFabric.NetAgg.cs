namespace Camdoop.Simulator.Network;

// NetAgg: the racks network with an agg box cabled to each switch the placement names (NetAggLayout), each box's
// cable at the boxes' own link rate. Boxes are hosts after the servers; hosts past the last box have no cable.
internal sealed partial class SwitchFabric
{
    private static void BuildNetAgg(Builder b, int servers, int hosts, SwitchedNetworkOptions options)
    {
        var layout = NetAggLayout.For(options, servers);
        if (servers + layout.Boxes > hosts)
        {
            throw new ArgumentException($"{layout.Boxes} agg boxes need {servers + layout.Boxes} hosts, not {hosts}");
        }
        BuildRacks(b, servers, options.NicsPerServer, options.RackSize, options.Oversubscription);
        // Racks add their switches first, rack by rack, then the core: switch number s is node hosts + s.
        for (int box = servers; box < servers + layout.Boxes; box++)
        {
            b.CableAppliance(box, hosts + layout.SwitchOf(box), options.AggBoxes.LinkRateBitsPerSecond);
        }
    }
}
