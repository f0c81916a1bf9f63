using System.Globalization;

namespace Camdoop.Monitoring.Control;

/// <summary>Rates as people write them: a number and a unit of bits per second, decimal (50mbit = 50,000,000 bit/s).</summary>
public static class RateText
{
    private static readonly (string Unit, double Bits)[] Units =
    [
        ("tbit", 1e12), ("gbit", 1e9), ("mbit", 1e6), ("kbit", 1e3), ("bit", 1),
    ];

    /// <summary>Reads a rate such as <c>50mbit</c>, <c>1.5gbit</c> or <c>800kbit</c> as bytes per second (at least 1).</summary>
    public static bool TryParse(string? text, out long bytesPerSecond)
    {
        bytesPerSecond = 0;
        if (string.IsNullOrWhiteSpace(text))
        {
            return false;
        }
        string t = text.Trim().ToLowerInvariant();
        if (t.EndsWith("/s", StringComparison.Ordinal))
        {
            t = t[..^2];
        }
        foreach (var (unit, bits) in Units)
        {
            if (!t.EndsWith(unit, StringComparison.Ordinal))
            {
                continue;
            }
            if (!double.TryParse(t[..^unit.Length].Trim(), NumberStyles.Float, CultureInfo.InvariantCulture, out double n)
                || !double.IsFinite(n) || n <= 0)
            {
                return false;
            }
            double bytes = Math.Round(n * bits / 8);
            if (bytes < 1 || bytes > Runtime.Node.TokenBucket.MaxBytesPerSecond)
            {
                return false;
            }
            bytesPerSecond = (long)bytes;
            return true;
        }
        return false;
    }

    /// <summary>Bytes per second as a bit rate people read: 6250000 is "50 Mbit/s".</summary>
    public static string Format(long bytesPerSecond)
    {
        double bits = bytesPerSecond * 8.0;
        return bits switch
        {
            >= 1e12 => string.Create(CultureInfo.InvariantCulture, $"{bits / 1e12:0.###} Tbit/s"),
            >= 1e9 => string.Create(CultureInfo.InvariantCulture, $"{bits / 1e9:0.###} Gbit/s"),
            >= 1e6 => string.Create(CultureInfo.InvariantCulture, $"{bits / 1e6:0.###} Mbit/s"),
            >= 1e3 => string.Create(CultureInfo.InvariantCulture, $"{bits / 1e3:0.###} kbit/s"),
            _ => string.Create(CultureInfo.InvariantCulture, $"{bits:0} bit/s"),
        };
    }
}
