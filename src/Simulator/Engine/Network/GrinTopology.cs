namespace Camdoop.Simulator.Network;

/// <summary>
/// GRIN ("wiring servers' free ports to each other beside the switch"): the racks network
/// (<see cref="RackTopology"/>) plus direct cables between servers of the same or a neighbouring rack,
/// <see cref="SwitchedNetworkOptions.FreePorts"/> per server (0: the racks network exactly). Which neighbour a flow
/// enters its destination through is the fabric's (<see cref="SwitchFabric.EntryServer"/>).
/// </summary>
public sealed class GrinTopology : RackTopology
{
    internal GrinTopology()
    {
    }

    public override NetworkKind Kind => NetworkKind.Grin;

    public override string Name => "grin";

    public override string Description => "racks plus direct cables between servers' free ports";

    public override bool CablesFreePorts => true;

    /// <summary>Its name and its degree after it: grin2 has two free ports cabled.</summary>
    public override string Label(SwitchedNetworkOptions options) => $"grin{options.FreePorts}";

    public override bool HasLabel(string label) => label.StartsWith(Name, StringComparison.Ordinal);

    internal override void Cable(FabricBuilder fabric, SwitchedNetworkOptions options, int servers)
    {
        base.Cable(fabric, options, servers);
        CableFreePorts(fabric, servers, options.RackSize, options.FreePorts);
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
    private static void CableFreePorts(FabricBuilder fabric, int servers, int rackSize, int freePorts)
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
            fabric.CableServers(a, nextPort[a]++, c, nextPort[c]++);
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
}
