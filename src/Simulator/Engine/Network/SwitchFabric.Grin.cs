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
