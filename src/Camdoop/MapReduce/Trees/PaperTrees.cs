using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Trees;

/// <summary>
/// The paper's six disjoint trees (§4.1, Fig. 4) as parent-port tables for a root at the origin. A server's parent in
/// tree t depends only on which of its offsets from the root are non-zero: tree 0 ("X+") follows the table below,
/// and the other five are its images under rotating the axes (X to Y to Z) and mirroring the signs.
/// <code>
/// x!=root.x y!=root.y z!=root.z | next hop in tree X+
///     0          0          1   | +X
///     0          1          0   | +X
///     0          1          1   | +X
///     1          0          0   | -X
///     1          0          1   | +Z
///     1          1          0   | +Y
///     1          1          1   | +Y
/// </code>
/// Tree t's only child of the root is the root's neighbour through <see cref="TreeTables.RootPort"/>.
/// </summary>
public static class PaperTrees
{
    // Next hop of tree X+ indexed by the (x, y, z) "differs from root" bits, as (axis, sign).
    private static readonly (int Axis, int Sign)[] BaseTable =
    [
        (-1, 0), // 000: the root itself
        (0, +1), // 001
        (0, +1), // 010
        (0, +1), // 011
        (0, -1), // 100
        (2, +1), // 101
        (1, +1), // 110
        (1, +1), // 111
    ];

    /// <summary>Parent port of every server (by index, root at the origin) in each tree; <see cref="TreeTables.NoParent"/> at the root.</summary>
    public static byte[][] Build(Torus torus)
    {
        var tables = new byte[TreeTopology.TreeCount][];
        for (int t = 0; t < TreeTopology.TreeCount; t++)
        {
            var byFlags = FlagTable(t);
            var table = new byte[torus.Count];
            for (int i = 0; i < torus.Count; i++)
            {
                var c = torus.CoordinateOf(i);
                int flags = (c.X != 0 ? 4 : 0) | (c.Y != 0 ? 2 : 0) | (c.Z != 0 ? 1 : 0);
                table[i] = flags == 0 ? TreeTables.NoParent : (byte)byFlags[flags];
            }
            tables[t] = table;
        }
        return tables;
    }

    // Tree t's port for each flag combination (flags indexed as x<<2 | y<<1 | z in absolute axes).
    private static Port[] FlagTable(int tree)
    {
        int rotation = tree % 3;
        int mirror = tree < 3 ? 1 : -1;
        var table = new Port[8];
        for (int flags = 1; flags < 8; flags++)
        {
            // Tree t sees absolute axis a as base axis (a - rotation) mod 3.
            int baseFlags = 0;
            for (int a = 0; a < 3; a++)
            {
                if ((flags & (4 >> a)) != 0)
                {
                    baseFlags |= 4 >> ((a - rotation + 3) % 3);
                }
            }
            var (baseAxis, sign) = BaseTable[baseFlags];
            table[flags] = Ports.FromAxis((baseAxis + rotation) % 3, sign * mirror);
        }
        return table;
    }
}
