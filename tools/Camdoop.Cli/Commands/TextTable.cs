using System.Globalization;
using System.Text;

namespace Camdoop.Cli.Commands;

/// <summary>Rows as aligned text columns, numbers right-aligned.</summary>
internal static class TextTable
{
    public static string Format(IReadOnlyList<string> columns, IReadOnlyList<IReadOnlyList<string>> rows, string indent = "")
    {
        var widths = columns.Select((c, i) => Math.Max(c.Length, rows.Count == 0 ? 0 : rows.Max(r => r[i].Length))).ToArray();
        var text = new StringBuilder();
        text.Append(indent).AppendJoin("  ", columns.Select((c, i) => c.PadRight(widths[i]))).AppendLine();
        foreach (var row in rows)
        {
            text.Append(indent).AppendJoin("  ", row.Select((v, i) => double.TryParse(v, NumberStyles.Float, CultureInfo.InvariantCulture, out _) ? v.PadLeft(widths[i]) : v.PadRight(widths[i]))).AppendLine();
        }
        return text.ToString();
    }
}
