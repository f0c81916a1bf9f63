using System.Globalization;

namespace Camdoop.Cli.Commands;

/// <summary>
/// The capabilities this process may use now (CapEff in /proc/self/status): what the kernel checks, whatever the
/// user id, so that root in a container without CAP_NET_RAW and a service user granted it are both judged right.
/// </summary>
internal static class LinuxCapabilities
{
    public const int NetAdmin = 12;

    public const int NetRaw = 13;

    /// <summary>The effective capability set as a bit mask; null where /proc does not say (not Linux).</summary>
    public static ulong? Effective()
    {
        const string path = "/proc/self/status";
        if (!File.Exists(path))
        {
            return null;
        }
        foreach (string line in File.ReadLines(path))
        {
            if (line.StartsWith("CapEff:", StringComparison.Ordinal)
                && ulong.TryParse(line["CapEff:".Length..].Trim(), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out ulong mask))
            {
                return mask;
            }
        }
        return null;
    }

    public static bool Has(ulong mask, int capability) => (mask & (1UL << capability)) != 0;
}
