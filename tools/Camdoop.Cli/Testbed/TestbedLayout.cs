using System.Globalization;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Testbed;

/// <summary>
/// Names and addresses of an emulated testbed: one network namespace per server ("{prefix}-x-y-z"), one veth pair
/// per torus link named after the port at each end, and a switch namespace with a bridge and one uplink per
/// server. Addresses live in a private /16 inside the project's namespaces, plus one host-side veth so that
/// clients on this machine can reach the front-ends.
/// </summary>
public sealed class TestbedLayout
{
    /// <summary>TCP port of every server's byte streams on the switch network (TCP Camdoop, mode tcp).</summary>
    public const int StreamPort = 7071;

    public TestbedLayout(string prefix, Torus torus, int subnet = 77)
    {
        if (prefix.Length is < 2 or > 6 || !prefix.All(char.IsAsciiLetterOrDigit))
        {
            throw new ArgumentException("the testbed prefix must be 2-6 ASCII letters or digits", nameof(prefix));
        }
        if (subnet is < 1 or > 254)
        {
            throw new ArgumentOutOfRangeException(nameof(subnet), "the subnet must be the second octet of a 10.x.0.0/16 network");
        }
        if (torus.Count > 250 * 250)
        {
            throw new ArgumentOutOfRangeException(nameof(torus), "too many servers for one /16 subnet");
        }
        Prefix = prefix;
        Torus = torus;
        Subnet = subnet;
    }

    public string Prefix { get; }

    public Torus Torus { get; }

    public int Subnet { get; }

    public string SwitchNamespace => $"{Prefix}-switch";

    public string BridgeName => "br0";

    public string ServerUplink => "uplink";

    public string HostInterface => $"{Prefix}host";

    public string HostAddress => string.Create(CultureInfo.InvariantCulture, $"10.{Subnet}.255.254");

    public string ServerNamespace(Coordinate c) => string.Create(CultureInfo.InvariantCulture, $"{Prefix}-{c.X}-{c.Y}-{c.Z}");

    /// <summary>The interface of port <paramref name="port"/> inside a server's namespace.</summary>
    public static string PortInterface(Port port) => port switch
    {
        Port.XPlus => "xplus",
        Port.XMinus => "xminus",
        Port.YPlus => "yplus",
        Port.YMinus => "yminus",
        Port.ZPlus => "zplus",
        Port.ZMinus => "zminus",
        _ => throw new ArgumentOutOfRangeException(nameof(port)),
    };

    /// <summary>Switch-side end of a server's uplink.</summary>
    public string SwitchPort(Coordinate c) => string.Create(CultureInfo.InvariantCulture, $"s{Torus.IndexOf(c)}");

    public string ServerAddress(Coordinate c)
    {
        int i = Torus.IndexOf(c);
        return string.Create(CultureInfo.InvariantCulture, $"10.{Subnet}.{i / 250}.{(i % 250) + 1}");
    }

    /// <summary>
    /// Whether a namespace name belongs to this testbed (used by `down` to clean up after a crash, whatever torus it
    /// had): its switch or a server <c>{prefix}-x-y-z</c>. Only that exact shape: another tool's <c>{prefix}-...</c>
    /// namespaces (the runtime tests' <c>cdp-{pid}-1a</c> once) are not ours to delete.
    /// </summary>
    public bool Owns(string netns)
    {
        if (netns == SwitchNamespace)
        {
            return true;
        }
        if (!netns.StartsWith(Prefix + "-", StringComparison.Ordinal))
        {
            return false;
        }
        var parts = netns[(Prefix.Length + 1)..].Split('-');
        return parts.Length == 3 && parts.All(p => p.Length > 0 && p.All(char.IsAsciiDigit));
    }
}
