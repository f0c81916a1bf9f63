using System.Globalization;

namespace Camdoop.Simulator.Events;

/// <summary>Virtual time is a long count of nanoseconds.</summary>
public static class SimTime
{
    public const long Nanosecond = 1;
    public const long Microsecond = 1_000;
    public const long Millisecond = 1_000_000;
    public const long Second = 1_000_000_000;

    public static double ToSeconds(long ns) => ns / (double)Second;

    public static long FromSeconds(double seconds) => (long)Math.Round(seconds * Second);

    public static string Format(long ns) => ns switch
    {
        < Microsecond => string.Create(CultureInfo.InvariantCulture, $"{ns} ns"),
        < Millisecond => string.Create(CultureInfo.InvariantCulture, $"{ns / (double)Microsecond:0.###} us"),
        < Second => string.Create(CultureInfo.InvariantCulture, $"{ns / (double)Millisecond:0.###} ms"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{ns / (double)Second:0.######} s"),
    };

    /// <summary>Parses a duration such as 100ms, 50us, 250ns, 1.5s or 180 (seconds) into nanoseconds.</summary>
    public static bool TryParseDuration(string text, out long nanoseconds)
    {
        ArgumentNullException.ThrowIfNull(text);
        nanoseconds = 0;
        text = text.Trim().ToLowerInvariant();
        int i = 0;
        while (i < text.Length && (char.IsDigit(text[i]) || text[i] == '.'))
        {
            i++;
        }
        if (i == 0 || !double.TryParse(text[..i], NumberStyles.Float, CultureInfo.InvariantCulture, out double value))
        {
            return false;
        }
        double scale = text[i..] switch
        {
            "ns" => 1,
            "us" or "µs" => 1e3,
            "ms" => 1e6,
            "s" or "" => 1e9,
            _ => -1,
        };
        if (scale < 0)
        {
            return false;
        }
        nanoseconds = (long)Math.Round(value * scale);
        return true;
    }
}
