namespace Camdoop.Simulator.Network;

/// <summary>
/// What a <see cref="NetworkTopology"/> builds a <see cref="SwitchFabric"/> with: switches, numbered as nodes after
/// every host in the order they are added, and cables, each switch end on the switch's next free port.
/// </summary>
internal sealed class FabricBuilder(int hosts)
{
    /// <summary>Hosts: the servers and any appliances after them. Node indices from here on are switches.</summary>
    public int Hosts => hosts;

    public List<string> Names { get; } = [];

    public List<int> Ports { get; } = [];

    public List<SwitchFabric.Cable> Cables { get; } = [];

    /// <summary>The node index of switch number <paramref name="number"/> (0-based, in the order added).</summary>
    public int SwitchNode(int number) => hosts + number;

    /// <summary>A switch named <paramref name="name"/>, with no port yet; returns its node index.</summary>
    public int AddSwitch(string name)
    {
        Names.Add(name);
        Ports.Add(0);
        return SwitchNode(Names.Count - 1);
    }

    public void CableServer(int server, int nic, int sw) => Cables.Add(new SwitchFabric.Cable(server, nic, sw, NextPort(sw)));

    public void CableServers(int a, int aPort, int b, int bPort) => Cables.Add(new SwitchFabric.Cable(a, aPort, b, bPort));

    public void CableSwitches(int a, int b) => Cables.Add(new SwitchFabric.Cable(a, NextPort(a), b, NextPort(b)));

    /// <summary>An appliance's one NIC (port 0) to switch <paramref name="sw"/>, at its own rate.</summary>
    public void CableAppliance(int host, int sw, long rate) => Cables.Add(new SwitchFabric.Cable(host, 0, sw, NextPort(sw), rate));

    private int NextPort(int sw) => Ports[sw - hosts]++;
}
