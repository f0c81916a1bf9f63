namespace Camdoop.Simulator.Network;

/// <summary>
/// How the simulated servers are wired, by name (--network, and the reports'): each kind's
/// <see cref="NetworkTopology"/> (<see cref="NetworkKinds.Topology"/>) builds it and answers for it.
/// </summary>
public enum NetworkKind
{
    /// <summary>The CamCube: every server wired to its six torus neighbours, no switch (<see cref="TorusTopology"/>).</summary>
    Torus,

    /// <summary>One full-bisection switch with every server's NICs on it (<see cref="SingleSwitchTopology"/>).</summary>
    Switch,

    /// <summary>Racks of servers behind top-of-rack switches, oversubscribed to one core switch (<see cref="RackTopology"/>).</summary>
    Racks,

    /// <summary>A k-ary fat tree of edge, aggregation and core switches, full bisection (<see cref="FatTreeTopology"/>).</summary>
    FatTree,

    /// <summary>Racks plus aggregation appliances, NetAgg's agg boxes, cabled to chosen switches (<see cref="NetAggTopology"/>).</summary>
    NetAgg,

    /// <summary>Racks plus direct cables between servers' free ports, GRIN (<see cref="GrinTopology"/>).</summary>
    Grin,
}

/// <summary>
/// A <see cref="NetworkKind"/>'s topology, name and parsing. <see cref="Topology"/> is the one place a kind meets the
/// class that builds it and answers for it; everything else about a network asks that class.
/// </summary>
public static class NetworkKinds
{
    private static readonly TorusTopology Torus = new();
    private static readonly SingleSwitchTopology SingleSwitch = new();
    private static readonly RackTopology Racks = new();
    private static readonly FatTreeTopology FatTree = new();
    private static readonly NetAggTopology NetAgg = new();
    private static readonly GrinTopology Grin = new();

    /// <summary>Every kind, in the order the command line lists them.</summary>
    public static IReadOnlyList<NetworkKind> All { get; } = Enum.GetValues<NetworkKind>();

    public static NetworkTopology Topology(this NetworkKind kind) => kind switch
    {
        NetworkKind.Torus => Torus,
        NetworkKind.Switch => SingleSwitch,
        NetworkKind.Racks => Racks,
        NetworkKind.FatTree => FatTree,
        NetworkKind.NetAgg => NetAgg,
        NetworkKind.Grin => Grin,
        _ => throw new ArgumentOutOfRangeException(nameof(kind)),
    };

    public static string Name(this NetworkKind kind) => kind.Topology().Name;

    /// <summary>The topology whose report label (<see cref="SwitchedNetworkOptions.Label"/>) is <paramref name="label"/>, or null.</summary>
    public static NetworkTopology? OfLabel(string label)
    {
        ArgumentNullException.ThrowIfNull(label);
        return All.Select(k => k.Topology()).FirstOrDefault(t => t.HasLabel(label));
    }

    public static bool TryParse(string text, out NetworkKind kind)
    {
        foreach (var k in All)
        {
            if (string.Equals(text, k.Name(), StringComparison.OrdinalIgnoreCase))
            {
                kind = k;
                return true;
            }
        }
        kind = default;
        return false;
    }
}
