namespace Camdoop.Simulator.Network;

/// <summary>
/// Racks of <see cref="SwitchedNetworkOptions.RackSize"/> servers in index order, each behind its top-of-rack switch,
/// with one uplink to a core switch per <see cref="SwitchedNetworkOptions.Oversubscription"/> downlinks (one rack: its
/// switch is the whole network). <see cref="NetAggTopology"/> and <see cref="GrinTopology"/> add to it: they share its
/// racks, switches and rack size, and cable more.
/// </summary>
public class RackTopology : NetworkTopology
{
    internal RackTopology()
    {
    }

    public override NetworkKind Kind => NetworkKind.Racks;

    public override string Name => "racks";

    public override bool HasOversubscribedRacks => true;

    public override string Description => "racks of 40, 1:4 oversubscribed";

    public override int RackSize(SwitchedNetworkOptions options, int servers) => options.RackSize;

    /// <summary>The racks' switches, rack by rack, then the core's (when there is more than one rack), and their cables.</summary>
    internal override void Cable(FabricBuilder fabric, SwitchedNetworkOptions options, int servers)
    {
        int rackSize = options.RackSize;
        int nics = options.NicsPerServer;
        int racks = (servers + rackSize - 1) / rackSize;
        var tors = new int[racks];
        for (int r = 0; r < racks; r++)
        {
            tors[r] = fabric.AddSwitch($"rack{r}");
            for (int s = r * rackSize; s < Math.Min(servers, (r + 1) * rackSize); s++)
            {
                for (int nic = 0; nic < nics; nic++)
                {
                    fabric.CableServer(s, nic, tors[r]);
                }
            }
        }
        if (racks == 1)
        {
            return; // one rack: its switch is the whole network
        }
        int core = fabric.AddSwitch("core");
        for (int r = 0; r < racks; r++)
        {
            int downlinks = (Math.Min(servers, (r + 1) * rackSize) - (r * rackSize)) * nics;
            int uplinks = (downlinks + options.Oversubscription - 1) / options.Oversubscription;
            for (int u = 0; u < uplinks; u++)
            {
                fabric.CableSwitches(tors[r], core);
            }
        }
    }
}
