using System.Numerics;
using System.Runtime.CompilerServices;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

/// <summary>
/// Shortest paths from one server over the links its database says are live (a link is live only when both ends
/// advertise it up). One breadth-first search gives, per destination, the hop count and the set of first-hop ports
/// that start a shortest path: a destination's set is the union of its shortest-path predecessors' sets.
/// </summary>
internal sealed class RouteTable
{
    private const byte Unreached = 0;

    private readonly NeighbourTable _neighbours;
    private readonly int _self;
    private readonly int[] _distance;
    private readonly byte[] _nextHops;
    private readonly int[] _queue;

    public RouteTable(Torus torus, int self)
    {
        _neighbours = NeighbourTable.Shared(torus);
        _self = self;
        _distance = new int[torus.Count];
        _nextHops = new byte[torus.Count];
        _queue = new int[torus.Count];
        Reachable = new ServerSet(torus.Count);
    }

    /// <summary>Servers with a path of live links from this one (this one included).</summary>
    public ServerSet Reachable { get; }

    /// <summary>Hops over live links, or -1 when unreachable.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int Distance(int server) => _distance[server] - 1;

    /// <summary>Bit p set when port p starts a shortest live path to <paramref name="server"/>.</summary>
    public byte NextHopPorts(int server) => _nextHops[server];

    /// <summary>
    /// Picks one of the equal-cost next hops by <paramref name="flowHash"/>, so a flow keeps its path while different
    /// flows spread. False when the destination is this server or unreachable.
    /// </summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public bool TryNextHop(int server, ulong flowHash, out Port port)
    {
        uint mask = _nextHops[server];
        if (mask == 0)
        {
            port = default;
            return false;
        }
        int choices = BitOperations.PopCount(mask);
        int pick = (int)(((flowHash >> 32) * (ulong)choices) >> 32);
        while (pick-- > 0)
        {
            mask &= mask - 1;
        }
        port = (Port)BitOperations.TrailingZeroCount(mask);
        return true;
    }

    public void Compute(LinkStateDatabase db)
    {
        // Distances are stored plus one so that a cleared array means "not reached".
        Array.Clear(_distance);
        Array.Clear(_nextHops);
        Reachable.Clear();
        int head = 0, tail = 0;
        _distance[_self] = 1;
        _queue[tail++] = _self;
        while (head < tail)
        {
            int u = _queue[head++];
            int next = _distance[u] + 1;
            byte inherited = _nextHops[u];
            byte uLinks = db.Links(u);
            for (int p = 0; p < Ports.Count; p++)
            {
                if (((uLinks >> p) & 1) == 0)
                {
                    continue;
                }
                int v = _neighbours.Of(u, p);
                if (!db.IsUp(v, p ^ 1))
                {
                    continue;
                }
                byte via = u == _self ? (byte)(1 << p) : inherited;
                if (_distance[v] == Unreached)
                {
                    _distance[v] = next;
                    _nextHops[v] = via;
                    _queue[tail++] = v;
                }
                else if (_distance[v] == next)
                {
                    _nextHops[v] |= via;
                }
            }
        }
        for (int i = 0; i < tail; i++)
        {
            Reachable.Add(_queue[i]);
        }
    }
}
