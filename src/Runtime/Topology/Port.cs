namespace Camdoop.Runtime.Topology;

/// <summary>One of the six links of a CamCube server. Opposite ports differ in the lowest bit.</summary>
public enum Port : byte
{
    XPlus = 0,
    XMinus = 1,
    YPlus = 2,
    YMinus = 3,
    ZPlus = 4,
    ZMinus = 5,
}

public static class Ports
{
    public const int Count = 6;

    /// <summary>All six ports in index order, for iteration without allocation.</summary>
    public static ReadOnlySpan<Port> All => [Port.XPlus, Port.XMinus, Port.YPlus, Port.YMinus, Port.ZPlus, Port.ZMinus];

    /// <summary>The port at the other end of a link leaving through <paramref name="port"/>.</summary>
    public static Port Opposite(this Port port) => (Port)((byte)port ^ 1);

    /// <summary>0 for X, 1 for Y, 2 for Z.</summary>
    public static int Axis(this Port port) => (byte)port >> 1;

    /// <summary>+1 for the plus ports, -1 for the minus ports.</summary>
    public static int Sign(this Port port) => ((byte)port & 1) == 0 ? 1 : -1;

    public static Port FromAxis(int axis, int sign) => (Port)((axis << 1) | (sign > 0 ? 0 : 1));

    public static string Name(this Port port) => port switch
    {
        Port.XPlus => "+X",
        Port.XMinus => "-X",
        Port.YPlus => "+Y",
        Port.YMinus => "-Y",
        Port.ZPlus => "+Z",
        Port.ZMinus => "-Z",
        _ => throw new ArgumentOutOfRangeException(nameof(port)),
    };

    public static bool TryParse(string text, out Port port)
    {
        for (int i = 0; i < Count; i++)
        {
            if (string.Equals(text, ((Port)i).Name(), StringComparison.OrdinalIgnoreCase))
            {
                port = (Port)i;
                return true;
            }
        }
        port = default;
        return false;
    }
}
