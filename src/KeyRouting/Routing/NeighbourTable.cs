using System.Collections.Concurrent;
using System.Runtime.CompilerServices;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

/// <summary>Flat table of every server's six neighbour indices, shared by all servers of one torus shape.</summary>
internal sealed class NeighbourTable
{
    private static readonly ConcurrentDictionary<(int, int, int), NeighbourTable> SharedTables = new();

    private readonly int[] _neighbours;

    private NeighbourTable(Torus torus)
    {
        _neighbours = new int[torus.Count * Ports.Count];
        for (int i = 0; i < torus.Count; i++)
        {
            var c = torus.CoordinateOf(i);
            foreach (var p in Ports.All)
            {
                _neighbours[(i * Ports.Count) + (int)p] = torus.IndexOf(torus.Neighbour(c, p));
            }
        }
    }

    public static NeighbourTable Shared(Torus torus) =>
        SharedTables.GetOrAdd((torus.SizeX, torus.SizeY, torus.SizeZ), static (_, t) => new NeighbourTable(t), torus);

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public int Of(int server, int port) => _neighbours[(server * Ports.Count) + port];
}
