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
}
