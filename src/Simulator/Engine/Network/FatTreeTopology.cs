namespace Camdoop.Simulator.Network;

/// <summary>
/// A k-ary fat tree of edge, aggregation and core switches (full bisection): k is
/// <see cref="SwitchedNetworkOptions.FatTreeK"/>, or the smallest even k with a host port for every NIC. Only the pods
/// and switches the servers need are built.
/// </summary>
public sealed class FatTreeTopology : NetworkTopology
{
    internal FatTreeTopology()
    {
    }

    public override NetworkKind Kind => NetworkKind.FatTree;

    public override string Name => "fattree";

    public override string Description => "k-ary fat tree";

    /// <summary>The servers under one edge switch.</summary>
    public override int RackSize(SwitchedNetworkOptions options, int servers)
    {
        // The k the fabric is built with: the one given, or the smallest that holds every NIC (a given k too small for
        // them fails to build).
        int k = Math.Max(options.FatTreeK, KFor(servers * options.NicsPerServer));
        return Math.Max(1, k / 2 / options.NicsPerServer);
    }

    /// <summary>Smallest even k whose fat tree has a host port for every NIC (k³/4 of them).</summary>
    internal static int KFor(int hostPorts)
    {
        int k = 2;
        while ((long)k * k * k / 4 < hostPorts)
        {
            k += 2;
        }
        return k;
    }

    internal override void Cable(FabricBuilder fabric, SwitchedNetworkOptions options, int servers)
    {
        int nics = options.NicsPerServer;
        int k = options.FatTreeK;
        int hostPorts = servers * nics;
        if (k == 0)
        {
            k = KFor(hostPorts);
        }
        else if ((long)k * k * k / 4 < hostPorts)
        {
            throw new ArgumentException($"a {k}-ary fat tree has {k * k * k / 4} host ports, fewer than the {hostPorts} NICs");
        }
        int half = k / 2;
        int edges = (hostPorts + half - 1) / half;
        int pods = (edges + half - 1) / half;
        var edge = new int[edges];
        for (int e = 0; e < edges; e++)
        {
            edge[e] = fabric.AddSwitch($"edge{e / half}.{e % half}");
        }
        for (int h = 0; h < hostPorts; h++)
        {
            fabric.CableServer(h / nics, h % nics, edge[h / half]);
        }
        if (edges == 1)
        {
            return;
        }
        var agg = new int[pods * half];
        for (int a = 0; a < agg.Length; a++)
        {
            agg[a] = fabric.AddSwitch($"agg{a / half}.{a % half}");
        }
        for (int e = 0; e < edges; e++)
        {
            int pod = e / half;
            for (int j = 0; j < half; j++)
            {
                fabric.CableSwitches(edge[e], agg[(pod * half) + j]);
            }
        }
        if (pods == 1)
        {
            return;
        }
        for (int j = 0; j < half; j++)
        {
            for (int m = 0; m < half; m++)
            {
                int core = fabric.AddSwitch($"core{j}.{m}");
                for (int pod = 0; pod < pods; pod++)
                {
                    fabric.CableSwitches(agg[(pod * half) + j], core);
                }
            }
        }
    }
}
