namespace Camdoop.Simulator.Network;

/// <summary>
/// NetAgg: the racks network (<see cref="RackTopology"/>) with an agg box cabled to each switch the placement names
/// (<see cref="NetAggLayout"/>), each box's cable at the boxes' own link rate. Boxes are hosts after the servers;
/// hosts past the last box have no cable.
/// </summary>
public sealed class NetAggTopology : RackTopology
{
    internal NetAggTopology()
    {
    }

    public override NetworkKind Kind => NetworkKind.NetAgg;

    public override string Name => "netagg";

    public override string Description => "racks plus agg boxes";

    public override bool HasAggBoxes => true;

    internal override bool EcmpPerConnection => true;

    public override NetAggLayout AggBoxes(SwitchedNetworkOptions options, int servers) => NetAggLayout.For(options, servers);

    internal override void Cable(FabricBuilder fabric, SwitchedNetworkOptions options, int servers)
    {
        var layout = AggBoxes(options, servers);
        if (servers + layout.Boxes > fabric.Hosts)
        {
            throw new ArgumentException($"{layout.Boxes} agg boxes need {servers + layout.Boxes} hosts, not {fabric.Hosts}");
        }
        base.Cable(fabric, options, servers);
        // Racks add their switches first, rack by rack, then the core: the layout's switch numbers are the fabric's.
        for (int box = servers; box < servers + layout.Boxes; box++)
        {
            fabric.CableAppliance(box, fabric.SwitchNode(layout.SwitchOf(box)), options.AggBoxes.LinkRateBitsPerSecond);
        }
    }
}
