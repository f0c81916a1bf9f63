using System.Globalization;

namespace Camdoop.Runtime.Topology;

/// <summary>The (x, y, z) address of a server in the torus.</summary>
public readonly record struct Coordinate(int X, int Y, int Z)
{
    public int this[int axis] => axis switch
    {
        0 => X,
        1 => Y,
        2 => Z,
        _ => throw new ArgumentOutOfRangeException(nameof(axis)),
    };

    public Coordinate With(int axis, int value) => axis switch
    {
        0 => this with { X = value },
        1 => this with { Y = value },
        2 => this with { Z = value },
        _ => throw new ArgumentOutOfRangeException(nameof(axis)),
    };

    public override string ToString() => string.Create(CultureInfo.InvariantCulture, $"({X},{Y},{Z})");

    /// <summary>"x,y,z": how servers are named on the command line, in logs and in status files.</summary>
    public string Name => string.Create(CultureInfo.InvariantCulture, $"{X},{Y},{Z}");

    /// <summary>Parses "x,y,z" or "(x,y,z)".</summary>
    public static bool TryParse(string text, out Coordinate coordinate)
    {
        coordinate = default;
        var parts = text.Trim().Trim('(', ')').Split(',');
        if (parts.Length != 3)
        {
            return false;
        }
        Span<int> v = stackalloc int[3];
        for (int i = 0; i < 3; i++)
        {
            if (!int.TryParse(parts[i].Trim(), NumberStyles.Integer, CultureInfo.InvariantCulture, out v[i]) || v[i] < 0)
            {
                return false;
            }
        }
        coordinate = new Coordinate(v[0], v[1], v[2]);
        return true;
    }
}
