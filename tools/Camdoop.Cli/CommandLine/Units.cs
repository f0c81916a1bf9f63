using System.Globalization;

namespace Camdoop.Cli.CommandLine;

/// <summary>Parsing and printing of sizes, durations and rates.</summary>
public static class Units
{
    public static bool TryParseBytes(string text, out long bytes)
    {
        bytes = 0;
        text = text.Trim();
        int i = 0;
        while (i < text.Length && (char.IsDigit(text[i]) || text[i] == '.'))
        {
            i++;
        }
        if (i == 0 || !double.TryParse(text[..i], NumberStyles.Float, CultureInfo.InvariantCulture, out double value))
        {
            return false;
        }
        double scale = text[i..].Trim().ToUpperInvariant() switch
        {
            "" or "B" => 1,
            "K" or "KB" or "KIB" => 1024,
            "M" or "MB" or "MIB" => 1024 * 1024,
            "G" or "GB" or "GIB" => 1024.0 * 1024 * 1024,
            _ => -1,
        };
        if (scale < 0)
        {
            return false;
        }
        bytes = (long)Math.Round(value * scale);
        return bytes >= 0;
    }

    /// <summary>A duration such as 100ms, 50us, 1.5s or 180 (seconds), in nanoseconds.</summary>
    public static bool TryParseDuration(string text, out long nanoseconds) => Simulator.Events.SimTime.TryParseDuration(text, out nanoseconds);

    public static string Bytes(double bytes)
    {
        string[] units = ["B", "KB", "MB", "GB", "TB"];
        int u = 0;
        while (Math.Abs(bytes) >= 1024 && u < units.Length - 1)
        {
            bytes /= 1024;
            u++;
        }
        return string.Create(CultureInfo.InvariantCulture, $"{bytes:0.##} {units[u]}");
    }

    public static string Seconds(double seconds) => Math.Abs(seconds) switch
    {
        < 1e-3 => string.Create(CultureInfo.InvariantCulture, $"{seconds * 1e6:0.#} us"),
        < 1 => string.Create(CultureInfo.InvariantCulture, $"{seconds * 1e3:0.###} ms"),
        _ => string.Create(CultureInfo.InvariantCulture, $"{seconds:0.###} s"),
    };

    /// <summary>"1 map task", "3 map tasks", "2 vertices".</summary>
    public static string Count(long count, string one, string? many = null) =>
        string.Create(CultureInfo.InvariantCulture, $"{count} {(count == 1 ? one : many ?? one + "s")}");
}
