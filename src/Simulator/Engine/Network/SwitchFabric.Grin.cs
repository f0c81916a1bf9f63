namespace Camdoop.Simulator.Network;

// GRIN ("wiring servers' free ports to each other beside the switch"): direct cables between servers of the same or
// a neighbouring rack, and which neighbour a flow enters its destination through.
internal sealed partial class SwitchFabric
{
    // Per server: its GRIN cables as (port, neighbour), in port order.
    private readonly int[] _grinStart;
    private readonly (int Port, int Neighbour)[] _grinLinks;

    /// <summary>Whether any server-to-server cable exists (a GRIN network with free ports cabled).</summary>
    public bool HasGrinCables => _grinLinks.Length > 0;

    /// <summary>The GRIN cables of <paramref name="server"/>: its port and the neighbour at the other end.</summary>
    public ReadOnlySpan<(int Port, int Neighbour)> GrinLinks(int server) =>
        _grinLinks.AsSpan(_grinStart[server], _grinStart[server + 1] - _grinStart[server]);

    /// <summary>The port of <paramref name="server"/> cabled to <paramref name="neighbour"/>, or -1.</summary>
    public int GrinPortTo(int server, int neighbour)
    {
        foreach (var (port, other) in GrinLinks(server))
        {
            if (other == neighbour)
            {
                return port;
            }
        }
        return -1;
    }

    /// <summary>
    /// The server a flow's frames enter <paramref name="destination"/> through: the destination itself or one of its
    /// GRIN neighbours, by a hash of the flow (its source, destination and connection id), so every switch sends a
    /// flow the same way and a flow keeps its path, as GRIN's addressing pins a connection to one of the
    /// destination's addresses. Never the source itself: its frames would come back to it.
    /// </summary>
    public int EntryServer(int source, int destination, uint flow)
    {
        var links = GrinLinks(destination);
        if (links.Length == 0)
        {
            return destination;
        }
        int choice = (int)(Mix(source, destination, flow) % (uint)(links.Length + 1));
        int entry = choice == 0 ? destination : links[choice - 1].Neighbour;
        return entry == source ? destination : entry;
    }

    /// <summary>
    /// The wiring rule. Servers are numbered in rack order (positions 0 to size - 1 in each rack). Free ports go in
    /// pairs: the k-th pair cables every server to the servers k positions on either side of it in a ring of its rack
    /// (skipped in a rack too small for it to add two new neighbours). An odd free port crosses to the neighbouring
    /// rack: racks stand in pairs (0 and 1, 2 and 3, ...) and the servers at the same position are cabled. The servers
    /// of a rack with no counterpart there (past the end of the smaller rack of a pair, or all of a last unpaired
    /// rack), L of them in position order, pair among themselves: the i-th with the (i + ⌈L/2⌉)-th, and any still
    /// without a partner with the next left-over server along the rack that is not yet its neighbour. No server is
    /// cabled to itself or twice to one neighbour; a server may be left with a port unused when no partner remains
    /// (one per rack with an odd number left over).
    /// </summary>
    private static void CableFreePorts(Builder b, int servers, int rackSize, int freePorts)
    {
        if (freePorts == 0)
        {
            return;
        }
        int racks = (servers + rackSize - 1) / rackSize;
        var nextPort = new int[servers];
        Array.Fill(nextPort, 1); // port 0 is the NIC
        var neighbours = new HashSet<(int, int)>();
        int SizeOf(int rack) => Math.Min(servers, (rack + 1) * rackSize) - (rack * rackSize);
        bool TryCable(int a, int c)
        {
            if (a == c || nextPort[a] > freePorts || nextPort[c] > freePorts || !neighbours.Add((Math.Min(a, c), Math.Max(a, c))))
            {
                return false;
            }
            b.CableServers(a, nextPort[a]++, c, nextPort[c]++);
            return true;
        }

        for (int k = 1; k <= freePorts / 2; k++)
        {
            for (int r = 0; r < racks; r++)
            {
                int size = SizeOf(r);
                if (size <= 2 * k)
                {
                    continue;
                }
                for (int p = 0; p < size; p++)
                {
                    TryCable((r * rackSize) + p, (r * rackSize) + ((p + k) % size));
                }
            }
        }
        if (freePorts % 2 == 0)
        {
            return;
        }
        for (int r = 0; r < racks; r += 2)
        {
            int size = SizeOf(r);
            int pairSize = r + 1 < racks ? SizeOf(r + 1) : 0;
            int paired = Math.Min(size, pairSize);
            for (int p = 0; p < paired; p++)
            {
                TryCable((r * rackSize) + p, ((r + 1) * rackSize) + p);
            }
            int rack = size > pairSize ? r : r + 1;
            var leftOver = Enumerable.Range(paired, Math.Max(size, pairSize) - paired).Select(p => (rack * rackSize) + p).ToList();
            int half = (leftOver.Count + 1) / 2;
            for (int i = 0; i + half < leftOver.Count; i++)
            {
                TryCable(leftOver[i], leftOver[i + half]);
            }
            for (int i = 0; i < leftOver.Count; i++)
            {
                for (int j = i + 1; j < leftOver.Count && nextPort[leftOver[i]] <= freePorts; j++)
                {
                    TryCable(leftOver[i], leftOver[j]);
                }
            }
        }
    }

    private (int[] Start, (int Port, int Neighbour)[] Links) BuildGrinTables()
    {
        int n = Servers;
        var lists = new List<(int Port, int Neighbour)>[n];
        for (int s = 0; s < n; s++)
        {
            lists[s] = [];
        }
        foreach (var c in Cables)
        {
            if (c.A < n && c.B < n)
            {
                lists[c.A].Add((c.APort, c.B));
                lists[c.B].Add((c.BPort, c.A));
            }
        }
        var start = new int[n + 1];
        var links = new List<(int Port, int Neighbour)>();
        for (int s = 0; s < n; s++)
        {
            start[s] = links.Count;
            lists[s].Sort();
            links.AddRange(lists[s]);
        }
        start[n] = links.Count;
        return (start, [.. links]);
    }

    private static uint Mix(int source, int destination, uint flow) =>
        FlowHash.Finish(((ulong)(uint)source << 32) ^ (uint)destination ^ ((ulong)flow * 0x9E3779B97F4A7C15UL));
}
