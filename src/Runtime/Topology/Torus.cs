using System.Globalization;

namespace Camdoop.Runtime.Topology;

/// <summary>
/// A k-ary 3-cube of X x Y x Z servers (each dimension at least 2). Servers are also numbered
/// 0..Count-1 in x-major order so that per-server state can live in flat arrays.
/// </summary>
public sealed class Torus : IEquatable<Torus>
{
    /// <summary>Coordinates travel as one byte each in the frame header.</summary>
    public const int MaxDimension = 255;

    public Torus(int sizeX, int sizeY, int sizeZ)
    {
        Check(sizeX, nameof(sizeX));
        Check(sizeY, nameof(sizeY));
        Check(sizeZ, nameof(sizeZ));
        SizeX = sizeX;
        SizeY = sizeY;
        SizeZ = sizeZ;
        Count = sizeX * sizeY * sizeZ;
    }

    public int SizeX { get; }
    public int SizeY { get; }
    public int SizeZ { get; }

    /// <summary>Number of servers.</summary>
    public int Count { get; }

    public int Size(int axis) => axis switch
    {
        0 => SizeX,
        1 => SizeY,
        2 => SizeZ,
        _ => throw new ArgumentOutOfRangeException(nameof(axis)),
    };

    /// <summary>Longest shortest path between two servers.</summary>
    public int Diameter => (SizeX / 2) + (SizeY / 2) + (SizeZ / 2);

    public bool Contains(Coordinate c) =>
        (uint)c.X < (uint)SizeX && (uint)c.Y < (uint)SizeY && (uint)c.Z < (uint)SizeZ;

    public int IndexOf(Coordinate c) => ((c.X * SizeY) + c.Y) * SizeZ + c.Z;

    public Coordinate CoordinateOf(int index)
    {
        int z = index % SizeZ;
        int rest = index / SizeZ;
        return new Coordinate(rest / SizeY, rest % SizeY, z);
    }

    /// <summary>The server reached by leaving <paramref name="c"/> through <paramref name="port"/>.</summary>
    public Coordinate Neighbour(Coordinate c, Port port)
    {
        int axis = port.Axis();
        int size = Size(axis);
        int v = c[axis] + port.Sign();
        if (v == size)
        {
            v = 0;
        }
        else if (v < 0)
        {
            v = size - 1;
        }
        return c.With(axis, v);
    }

    public int NeighbourIndex(int index, Port port) => IndexOf(Neighbour(CoordinateOf(index), port));

    /// <summary>
    /// The port of <paramref name="from"/> whose link leads to <paramref name="to"/>, or null when they are not
    /// one-hop neighbours. In a dimension of size 2 both ports of that axis lead to the same server; the plus port is returned.
    /// </summary>
    public Port? PortTo(Coordinate from, Coordinate to)
    {
        foreach (var p in Ports.All)
        {
            if (Neighbour(from, p) == to)
            {
                return p;
            }
        }
        return null;
    }

    /// <summary>Signed shortest offset from <paramref name="a"/> to <paramref name="b"/> along one axis, in (-size/2, size/2].</summary>
    public int Offset(Coordinate a, Coordinate b, int axis)
    {
        int size = Size(axis);
        int d = ((b[axis] - a[axis]) % size + size) % size;
        return d > size / 2 ? d - size : d;
    }

    /// <summary>Torus (Manhattan with wrap-around) distance: the hop count of a shortest path.</summary>
    public int Distance(Coordinate a, Coordinate b) =>
        Math.Abs(Offset(a, b, 0)) + Math.Abs(Offset(a, b, 1)) + Math.Abs(Offset(a, b, 2));

    public IEnumerable<Coordinate> All()
    {
        for (int i = 0; i < Count; i++)
        {
            yield return CoordinateOf(i);
        }
    }

    /// <summary>Parses "XxYxZ", e.g. "3x3x3" or "8x8x8".</summary>
    public static bool TryParse(string text, out Torus? torus, out string? error)
    {
        torus = null;
        error = null;
        var parts = text.Trim().ToLowerInvariant().Split('x');
        if (parts.Length != 3)
        {
            error = $"torus '{text}' is not of the form XxYxZ (e.g. 3x3x3)";
            return false;
        }
        Span<int> v = stackalloc int[3];
        for (int i = 0; i < 3; i++)
        {
            if (!int.TryParse(parts[i], NumberStyles.Integer, CultureInfo.InvariantCulture, out v[i]) || v[i] < 2 || v[i] > MaxDimension)
            {
                error = $"torus '{text}': every dimension must be an integer between 2 and {MaxDimension}";
                return false;
            }
        }
        torus = new Torus(v[0], v[1], v[2]);
        return true;
    }

    public static Torus Parse(string text) =>
        TryParse(text, out var t, out var error) ? t! : throw new FormatException(error);

    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"{SizeX}x{SizeY}x{SizeZ}");

    public bool Equals(Torus? other) =>
        other is not null && other.SizeX == SizeX && other.SizeY == SizeY && other.SizeZ == SizeZ;

    public override bool Equals(object? obj) => Equals(obj as Torus);

    public override int GetHashCode() => HashCode.Combine(SizeX, SizeY, SizeZ);

    private static void Check(int size, string name)
    {
        if (size < 2 || size > MaxDimension)
        {
            throw new ArgumentOutOfRangeException(name, size, $"a torus dimension must be between 2 and {MaxDimension}");
        }
    }
}
