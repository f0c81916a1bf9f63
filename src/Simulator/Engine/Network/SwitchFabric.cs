namespace Camdoop.Simulator.Network;

/// <summary>
/// The wiring of a switched network, as its <see cref="NetworkTopology"/> cables it: which switch ports the servers'
/// NICs and the switches' uplinks are cabled to, and, per switch and destination server, the ports that start a
/// shortest path there (equal-cost paths for ECMP). Nodes are numbered servers first (0 to N - 1, the torus index order), then switches (N onwards).
/// </summary>
internal sealed partial class SwitchFabric
{
    private readonly int[][] _routeStart;
    private readonly int[][] _routePorts;

    private SwitchFabric(int servers, int nics, List<string> names, List<int> portCounts, List<Cable> cables)
    {
        Servers = servers;
        NicsPerServer = nics;
        SwitchNames = names;
        PortCounts = portCounts;
        Cables = cables;
        (_routeStart, _routePorts) = BuildRoutes();
        (_grinStart, _grinLinks) = BuildGrinTables();
    }

    /// <summary>Hosts: the servers and any appliances after them. Node indices from here on are switches.</summary>
    public int Servers { get; }

    public int NicsPerServer { get; }

    public int SwitchCount => SwitchNames.Count;

    public IReadOnlyList<string> SwitchNames { get; }

    /// <summary>Ports of each switch (index: switch number, 0-based).</summary>
    public IReadOnlyList<int> PortCounts { get; }

    /// <summary>Every cable once; a server's end names its port (0 to 5: a NIC, or a GRIN cable's), a switch's end its port.</summary>
    public IReadOnlyList<Cable> Cables { get; }

    /// <summary>Ports of switch <paramref name="sw"/> (0-based) that start a shortest path to server <paramref name="server"/>.</summary>
    public ReadOnlySpan<int> Route(int sw, int server)
    {
        var start = _routeStart[sw];
        return _routePorts[sw].AsSpan(start[server], start[server + 1] - start[server]);
    }

    /// <summary>
    /// The wiring of <paramref name="servers"/> servers as <paramref name="options"/>' topology cables them;
    /// <paramref name="hosts"/> (default: the servers) numbers the nodes, so appliances after the servers (NetAgg's agg
    /// boxes) are hosts too and switches come after every host.
    /// </summary>
    public static SwitchFabric Build(SwitchedNetworkOptions options, int servers, int hosts = 0)
    {
        options.Validate();
        var fabric = new FabricBuilder(Math.Max(hosts, servers));
        options.Topology.Cable(fabric, options, servers);
        return new SwitchFabric(fabric.Hosts, options.NicsPerServer, fabric.Names, fabric.Ports, fabric.Cables);
    }

    /// <summary>A breadth-first search from every server over the switches gives each switch its shortest-path ports.</summary>
    private (int[][] Start, int[][] Ports) BuildRoutes()
    {
        int n = Servers;
        int switches = SwitchCount;
        // Per switch: (port, neighbour node) for each of its ports.
        var neighbour = new int[switches][];
        for (int s = 0; s < switches; s++)
        {
            neighbour[s] = new int[PortCounts[s]];
        }
        foreach (var c in Cables)
        {
            if (c.A >= n)
            {
                neighbour[c.A - n][c.APort] = c.B;
            }
            if (c.B >= n)
            {
                neighbour[c.B - n][c.BPort] = c.A;
            }
        }
        var starts = new int[switches][];
        var counts = new List<int>[switches];
        for (int s = 0; s < switches; s++)
        {
            starts[s] = new int[n + 1];
            counts[s] = [];
        }
        var dist = new int[switches];
        var frontier = new Queue<int>();
        for (int d = 0; d < n; d++)
        {
            Array.Fill(dist, int.MaxValue);
            for (int s = 0; s < switches; s++)
            {
                if (Array.IndexOf(neighbour[s], d) >= 0)
                {
                    dist[s] = 1;
                    frontier.Enqueue(s);
                }
            }
            while (frontier.Count > 0)
            {
                int s = frontier.Dequeue();
                foreach (int nb in neighbour[s])
                {
                    if (nb >= n && dist[nb - n] == int.MaxValue)
                    {
                        dist[nb - n] = dist[s] + 1;
                        frontier.Enqueue(nb - n);
                    }
                }
            }
            for (int s = 0; s < switches; s++)
            {
                starts[s][d] = counts[s].Count;
                var ports = neighbour[s];
                for (int p = 0; p < ports.Length; p++)
                {
                    int nb = ports[p];
                    bool next = nb == d || (nb >= n && dist[s] != int.MaxValue && dist[nb - n] == dist[s] - 1);
                    if (next)
                    {
                        counts[s].Add(p);
                    }
                }
            }
        }
        var portLists = new int[switches][];
        for (int s = 0; s < switches; s++)
        {
            starts[s][n] = counts[s].Count;
            portLists[s] = [.. counts[s]];
        }
        return (starts, portLists);
    }

    /// <summary>
    /// A cable between node <see cref="A"/>'s port <see cref="APort"/> and node <see cref="B"/>'s port <see cref="BPort"/>,
    /// at <see cref="RateBitsPerSecond"/> (0: the simulation's link rate).
    /// </summary>
    internal readonly record struct Cable(int A, int APort, int B, int BPort, long RateBitsPerSecond = 0);
}
