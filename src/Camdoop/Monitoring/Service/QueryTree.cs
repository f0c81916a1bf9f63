using Camdoop.Runtime.Topology;

namespace Camdoop.Monitoring.Service;

/// <summary>
/// The convergecast tree a query's results travel up to the asking server (the root): every other server's parent is
/// its neighbour one hop closer to the root, correcting X first, then Y, then Z (dimension-ordered, so every path is
/// a shortest one and each server knows its parent and children from the coordinates alone).
/// </summary>
public static class QueryTree
{
    /// <summary>The port towards <paramref name="self"/>'s parent, or null at the root.</summary>
    public static Port? ParentPort(Torus torus, Coordinate self, Coordinate root)
    {
        ArgumentNullException.ThrowIfNull(torus);
        for (int axis = 0; axis < 3; axis++)
        {
            int offset = torus.Offset(self, root, axis);
            if (offset != 0)
            {
                return Ports.FromAxis(axis, Math.Sign(offset));
            }
        }
        return null;
    }

    /// <summary>The ports leading to <paramref name="self"/>'s children, as a bit set over <see cref="Port"/>.</summary>
    public static int ChildPorts(Torus torus, Coordinate self, Coordinate root)
    {
        ArgumentNullException.ThrowIfNull(torus);
        int children = 0;
        foreach (var port in Ports.All)
        {
            var neighbour = torus.Neighbour(self, port);
            // The child's parent link must be this very link: on a ring of two both ports reach the same neighbour.
            if (neighbour != self && ParentPort(torus, neighbour, root) == port.Opposite())
            {
                children |= 1 << (int)port;
            }
        }
        return children;
    }

    /// <summary>The tree's height: no server is further from the root.</summary>
    public static int Height(Torus torus) => torus.Diameter;
}
