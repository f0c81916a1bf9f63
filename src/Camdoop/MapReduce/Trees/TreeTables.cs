using System.Collections.Concurrent;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Trees;

/// <summary>
/// Parent-port tables of a tree family for a root at the origin, built once per torus shape and shared: trees are
/// translation-invariant, so a root elsewhere looks up the vertex's offset from it. Building is deterministic, so
/// every server of a cluster computes the same tables on its own.
/// </summary>
public static class TreeTables
{
    /// <summary>The parent port recorded for the root.</summary>
    public const byte NoParent = 0xFF;

    private static readonly ConcurrentDictionary<(int X, int Y, int Z, TreeFamily Family), Lazy<byte[][]>> Cache = new();

    /// <summary>The root's port towards tree <paramref name="tree"/>'s only child: X+, Y+, Z+, X-, Y-, Z- in tree order.</summary>
    public static Port RootPort(int tree) => Ports.FromAxis(tree % 3, tree < 3 ? 1 : -1);

    /// <summary>Tables [tree][server index] of parent ports, for a root at the origin.</summary>
    public static byte[][] Get(Torus torus, TreeFamily family)
    {
        ArgumentNullException.ThrowIfNull(torus);
        if (!Enum.IsDefined(family))
        {
            throw new ArgumentOutOfRangeException(nameof(family), family, "unknown tree family");
        }
        var lazy = Cache.GetOrAdd((torus.SizeX, torus.SizeY, torus.SizeZ, family), key => new Lazy<byte[][]>(() => key.Family switch
        {
            TreeFamily.Paper => PaperTrees.Build(torus),
            _ => ShallowTreeSearch.Build(torus),
        }));
        return lazy.Value;
    }
}
