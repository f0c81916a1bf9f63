using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Network;

/// <summary>
/// Where a NetAgg network's agg boxes are (<see cref="NetAggTopology"/>): the racks of <see cref="RackTopology"/>
/// (racks of <see cref="SwitchedNetworkOptions.RackSize"/> servers in index order, one core switch when there is more
/// than one rack) with a box on each switch the placement names. Boxes are hosts numbered after the job's servers:
/// rack boxes in rack order, then the core's. The hosts' torus is the servers' torus with extra x-planes to hold them
/// (a plane's hosts past the last box have no cable), so the servers keep their indices and coordinates.
/// </summary>
public sealed class NetAggLayout
{
    private readonly int[] _rackBox;

    private NetAggLayout(int servers, int rackSize, int racks, int[] rackBox, int coreBox, int boxes)
    {
        Servers = servers;
        RackSize = rackSize;
        Racks = racks;
        _rackBox = rackBox;
        CoreBox = coreBox;
        Boxes = boxes;
    }

    public int Servers { get; }

    public int RackSize { get; }

    public int Racks { get; }

    /// <summary>Agg boxes; their host indices are <see cref="Servers"/> onwards.</summary>
    public int Boxes { get; }

    /// <summary>Host index of the core switch's box, or -1 (one rack has no core; a partial deployment may have none).</summary>
    public int CoreBox { get; }

    public static NetAggLayout For(SwitchedNetworkOptions network, int servers)
    {
        ArgumentNullException.ThrowIfNull(network);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(servers);
        int rackSize = network.RackSize;
        int racks = (servers + rackSize - 1) / rackSize;
        var rackBox = new int[racks];
        int next = servers;
        bool atRacks = network.AggBoxes.Placement == AggBoxPlacement.All;
        for (int r = 0; r < racks; r++)
        {
            rackBox[r] = atRacks ? next++ : -1;
        }
        int core = racks > 1 ? next++ : -1;
        return new NetAggLayout(servers, rackSize, racks, rackBox, core, next - servers);
    }

    public int RackOf(int server) => server / RackSize;

    /// <summary>Host index of rack <paramref name="rack"/>'s box, or -1 when its switch has none.</summary>
    public int RackBox(int rack) => _rackBox[rack];

    /// <summary>The switch a box is cabled to: its rack's (rack number) or the core (number <see cref="Racks"/>).</summary>
    public int SwitchOf(int box) => box == CoreBox ? Racks : Array.IndexOf(_rackBox, box);

    /// <summary>A box's name in reports: "box@rack3", "box@core".</summary>
    public string NameOf(int box) => box == CoreBox ? "box@core" : $"box@rack{SwitchOf(box)}";

    /// <summary>The host index of the box a name such as "rack3" or "core" (as <see cref="NameOf"/> gives them) names, or -1.</summary>
    public int BoxNamed(string name)
    {
        ArgumentNullException.ThrowIfNull(name);
        for (int box = Servers; box < Servers + Boxes; box++)
        {
            if (string.Equals(NameOf(box)["box@".Length..], name, StringComparison.OrdinalIgnoreCase))
            {
                return box;
            }
        }
        return -1;
    }

    /// <summary>The hosts' torus: the servers' with enough extra x-planes for the boxes.</summary>
    public Torus HostTorus(Torus servers)
    {
        ArgumentNullException.ThrowIfNull(servers);
        if (servers.Count != Servers)
        {
            throw new ArgumentException($"the layout is for {Servers} servers, not {servers.Count}", nameof(servers));
        }
        int plane = servers.SizeY * servers.SizeZ;
        int planes = (Boxes + plane - 1) / plane;
        return planes == 0 ? servers : new Torus(servers.SizeX + planes, servers.SizeY, servers.SizeZ);
    }
}
