namespace Camdoop.Simulator.Network;

/// <summary>
/// The wiring of a switched network: which switch ports the servers' NICs and the switches' uplinks are cabled to,
/// and, per switch and destination server, the ports that start a shortest path there (equal-cost paths for ECMP).
/// Nodes are numbered servers first (0 to N - 1, the torus index order), then switches (N onwards).
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
    /// The wiring of <paramref name="servers"/> servers; <paramref name="hosts"/> (default: the servers) numbers the
    /// nodes, so appliances after the servers (NetAgg's agg boxes) are hosts too and switches come after every host.
    /// </summary>
    public static SwitchFabric Build(SwitchedNetworkOptions options, int servers, int hosts = 0)
    {
        options.Validate();
        int nics = options.NicsPerServer;
        hosts = Math.Max(hosts, servers);
        var b = new Builder(hosts);
        switch (options.Kind)
        {
            case NetworkKind.Switch:
                {
                    int sw = b.AddSwitch("switch");
                    for (int s = 0; s < servers; s++)
                    {
                        for (int nic = 0; nic < nics; nic++)
                        {
                            b.CableServer(s, nic, sw);
                        }
                    }
                    break;
                }
            case NetworkKind.Racks:
                BuildRacks(b, servers, nics, options.RackSize, options.Oversubscription);
                break;
            case NetworkKind.FatTree:
                BuildFatTree(b, servers, nics, options.FatTreeK);
                break;
            case NetworkKind.NetAgg:
                BuildNetAgg(b, servers, hosts, options);
                break;
            case NetworkKind.Grin:
                BuildRacks(b, servers, nics, options.RackSize, options.Oversubscription);
                CableFreePorts(b, servers, options.RackSize, options.FreePorts);
                break;
            default:
                throw new ArgumentException("not a switched network", nameof(options));
        }
        return new SwitchFabric(hosts, nics, b.Names, b.Ports, b.Cables);
    }

    /// <summary>Smallest even k whose fat tree has a host port for every NIC (k³/4 of them).</summary>
    public static int FatTreeKFor(int hostPorts)
    {
        int k = 2;
        while ((long)k * k * k / 4 < hostPorts)
        {
            k += 2;
        }
        return k;
    }

    private static void BuildRacks(Builder b, int servers, int nics, int rackSize, int oversubscription)
    {
        int racks = (servers + rackSize - 1) / rackSize;
        var tors = new int[racks];
        for (int r = 0; r < racks; r++)
        {
            tors[r] = b.AddSwitch($"rack{r}");
            for (int s = r * rackSize; s < Math.Min(servers, (r + 1) * rackSize); s++)
            {
                for (int nic = 0; nic < nics; nic++)
                {
                    b.CableServer(s, nic, tors[r]);
                }
            }
        }
        if (racks == 1)
        {
            return; // one rack: its switch is the whole network
        }
        int core = b.AddSwitch("core");
        for (int r = 0; r < racks; r++)
        {
            int downlinks = (Math.Min(servers, (r + 1) * rackSize) - (r * rackSize)) * nics;
            int uplinks = (downlinks + oversubscription - 1) / oversubscription;
            for (int u = 0; u < uplinks; u++)
            {
                b.CableSwitches(tors[r], core);
            }
        }
    }

    private static void BuildFatTree(Builder b, int servers, int nics, int k)
    {
        int hostPorts = servers * nics;
        if (k == 0)
        {
            k = FatTreeKFor(hostPorts);
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
            edge[e] = b.AddSwitch($"edge{e / half}.{e % half}");
        }
        for (int h = 0; h < hostPorts; h++)
        {
            b.CableServer(h / nics, h % nics, edge[h / half]);
        }
        if (edges == 1)
        {
            return;
        }
        var agg = new int[pods * half];
        for (int a = 0; a < agg.Length; a++)
        {
            agg[a] = b.AddSwitch($"agg{a / half}.{a % half}");
        }
        for (int e = 0; e < edges; e++)
        {
            int pod = e / half;
            for (int j = 0; j < half; j++)
            {
                b.CableSwitches(edge[e], agg[(pod * half) + j]);
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
                int core = b.AddSwitch($"core{j}.{m}");
                for (int pod = 0; pod < pods; pod++)
                {
                    b.CableSwitches(agg[(pod * half) + j], core);
                }
            }
        }
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

    private sealed class Builder(int servers)
    {
        public List<string> Names { get; } = [];

        public List<int> Ports { get; } = [];

        public List<Cable> Cables { get; } = [];

        public int AddSwitch(string name)
        {
            Names.Add(name);
            Ports.Add(0);
            return servers + Names.Count - 1;
        }

        public void CableServer(int server, int nic, int sw) => Cables.Add(new Cable(server, nic, sw, NextPort(sw)));

        public void CableServers(int a, int aPort, int b, int bPort) => Cables.Add(new Cable(a, aPort, b, bPort));

        public void CableSwitches(int a, int b) => Cables.Add(new Cable(a, NextPort(a), b, NextPort(b)));

        /// <summary>An appliance's one NIC (port 0) to switch <paramref name="sw"/>, at its own rate.</summary>
        public void CableAppliance(int host, int sw, long rate) => Cables.Add(new Cable(host, 0, sw, NextPort(sw), rate));

        private int NextPort(int sw) => Ports[sw - servers]++;
    }
}
