namespace Camdoop.Experiments.Baselines;

/// <summary>Shuffle time lower bounds of switched clusters, in seconds (reduce compute not included).</summary>
public sealed record SwitchBounds(double Switch1G, double Switch6G, double Switch1GOversubscribed);

/// <summary>
/// Lower bounds on the shuffle time of any implementation over a switched cluster (the Camdoop paper, §5.2): the bytes that
/// must cross the busiest bottleneck divided by its rate. A server's own data for its own reduce task never
/// crosses the network. Bottlenecks are each server's uplink (out) and downlink (in), and, in the oversubscribed
/// fabric, each rack's uplink to the aggregation layer.
/// </summary>
public static class SwitchLowerBounds
{
    public const double GigabitPerSecond = 1e9;

    /// <summary>Racks of 40 servers with 1:4 oversubscription, as in the paper's Figure 6.</summary>
    public const int ServersPerRack = 40;

    public const double Oversubscription = 4;

    public static SwitchBounds Compute(ShuffleDemand demand)
    {
        ArgumentNullException.ThrowIfNull(demand);
        long busiestServer = BusiestServerLink(demand);
        long busiestRack = BusiestRackUplink(demand, ServersPerRack, out int busiestRackSize);
        double server1G = Seconds(busiestServer, GigabitPerSecond);
        double rackRate = busiestRackSize * GigabitPerSecond / Oversubscription;
        double oversubscribed = Math.Max(server1G, busiestRack == 0 ? 0 : Seconds(busiestRack, rackRate));
        return new SwitchBounds(server1G, Seconds(busiestServer, 6 * GigabitPerSecond), oversubscribed);
    }

    /// <summary>Largest of any server's outbound and inbound shuffle bytes.</summary>
    public static long BusiestServerLink(ShuffleDemand demand)
    {
        var inbound = new long[demand.Servers];
        long busiest = 0;
        for (int s = 0; s < demand.Servers; s++)
        {
            long outbound = 0;
            for (int r = 0; r < demand.Reducers; r++)
            {
                int host = demand.ReducerServer[r];
                if (host != s)
                {
                    long b = demand[s, r];
                    outbound += b;
                    inbound[host] += b;
                }
            }
            busiest = Math.Max(busiest, outbound);
        }
        foreach (long b in inbound)
        {
            busiest = Math.Max(busiest, b);
        }
        return busiest;
    }

    /// <summary>
    /// Largest of any rack's cross-rack outbound and inbound bytes. The rack's uplink rate scales with its size
    /// (the last rack may be partial), so the rack whose time is largest is reported, with its size.
    /// </summary>
    public static long BusiestRackUplink(ShuffleDemand demand, int serversPerRack, out int rackSize)
    {
        int racks = (demand.Servers + serversPerRack - 1) / serversPerRack;
        var outbound = new long[racks];
        var inbound = new long[racks];
        for (int s = 0; s < demand.Servers; s++)
        {
            int from = s / serversPerRack;
            for (int r = 0; r < demand.Reducers; r++)
            {
                int to = demand.ReducerServer[r] / serversPerRack;
                if (to != from)
                {
                    long b = demand[s, r];
                    outbound[from] += b;
                    inbound[to] += b;
                }
            }
        }
        long busiestBytes = 0;
        double busiestTime = -1;
        rackSize = serversPerRack;
        for (int k = 0; k < racks; k++)
        {
            int size = Math.Min(serversPerRack, demand.Servers - (k * serversPerRack));
            long bytes = Math.Max(outbound[k], inbound[k]);
            double time = (double)bytes / size;
            if (time > busiestTime)
            {
                busiestTime = time;
                busiestBytes = bytes;
                rackSize = size;
            }
        }
        return busiestBytes;
    }

    private static double Seconds(long bytes, double bitsPerSecond) => bytes * 8 / bitsPerSecond;
}
