namespace Camdoop.Simulator.Network;

/// <summary>One full-bisection switch with every server's NICs on it.</summary>
public sealed class SingleSwitchTopology : NetworkTopology
{
    internal SingleSwitchTopology()
    {
    }

    public override NetworkKind Kind => NetworkKind.Switch;

    public override string Name => "switch";

    public override string Description => "one full-bisection switch";

    internal override void Cable(FabricBuilder fabric, SwitchedNetworkOptions options, int servers)
    {
        int sw = fabric.AddSwitch("switch");
        for (int s = 0; s < servers; s++)
        {
            for (int nic = 0; nic < options.NicsPerServer; nic++)
            {
                fabric.CableServer(s, nic, sw);
            }
        }
    }
}
