namespace Camdoop.Simulator.Network;

/// <summary>How the simulated servers are wired.</summary>
public enum NetworkKind
{
    /// <summary>The CamCube: every server wired to its six torus neighbours, no switch.</summary>
    Torus,

    /// <summary>One full-bisection switch with every server's NICs on it.</summary>
    Switch,

    /// <summary>Racks of servers behind top-of-rack switches, oversubscribed to one core switch.</summary>
    Racks,

    /// <summary>A k-ary fat tree of edge, aggregation and core switches (full bisection).</summary>
    FatTree,

    /// <summary>Racks as <see cref="Racks"/>, plus aggregation appliances (NetAgg's agg boxes) cabled to chosen switches.</summary>
    NetAgg,

    /// <summary>Racks as <see cref="Racks"/>, plus direct cables between servers' free ports (GRIN).</summary>
    Grin,
}

public static class NetworkKinds
{
    public static string Name(this NetworkKind kind) => kind switch
    {
        NetworkKind.Torus => "torus",
        NetworkKind.Switch => "switch",
        NetworkKind.Racks => "racks",
        NetworkKind.FatTree => "fattree",
        NetworkKind.NetAgg => "netagg",
        NetworkKind.Grin => "grin",
        _ => throw new ArgumentOutOfRangeException(nameof(kind)),
    };

    public static bool TryParse(string text, out NetworkKind kind)
    {
        foreach (var k in Enum.GetValues<NetworkKind>())
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
