using System.Globalization;
using System.Security;
using System.Text;

namespace Camdoop.Experiments.Reports;

/// <summary>
/// What the SVG charts share: a title that wraps to the chart's width, and a legend below the plot area that wraps
/// its entries into rows, so that neither runs off the drawing or over the plot, whatever the series' names.
/// </summary>
internal static class SvgLayout
{
    public const int TitleSize = 15;
    public const int TitleLineHeight = 19;
    public const int LegendRow = 20;
    public const int LegendSwatch = 24;
    public const int LegendPadding = 8;
    private const int LegendGap = 6;
    private const int LegendSpacing = 18;

    /// <summary>
    /// A generous estimate of a sans-serif string's width: 0.62 em a character (wider than the average of mixed text), so
    /// a layout on it leaves room rather than overlapping.
    /// </summary>
    public static double TextWidth(string text, double fontSize = 12) => text.Length * fontSize * 0.62;

    /// <summary>The title's lines, broken at spaces to fit <paramref name="width"/> at the title's size.</summary>
    public static IReadOnlyList<string> TitleLines(string title, double width)
    {
        var lines = new List<string>();
        var line = new StringBuilder();
        foreach (string word in title.Split(' '))
        {
            if (line.Length > 0 && TextWidth(line + " " + word, TitleSize) > width)
            {
                lines.Add(line.ToString());
                line.Clear();
            }
            line.Append(line.Length > 0 ? " " : "").Append(word);
        }
        lines.Add(line.ToString());
        return lines;
    }

    /// <summary>Writes the title centred at <paramref name="centre"/>, one text line per wrapped line, from y = 22.</summary>
    public static void WriteTitle(StringBuilder sb, IReadOnlyList<string> lines, double centre)
    {
        for (int i = 0; i < lines.Count; i++)
        {
            sb.Append(Inv($"<text x=\"{centre:0.##}\" y=\"{22 + (i * TitleLineHeight)}\" text-anchor=\"middle\" font-size=\"{TitleSize}\" font-weight=\"bold\">{Esc(lines[i])}</text>\n"));
        }
    }

    /// <summary>One legend entry's place: the swatch's left edge and the row's middle, and its text as drawn.</summary>
    public readonly record struct LegendEntry(double X, double Y, string Text);

    /// <summary>
    /// Lays the entries out left to right in rows within [<paramref name="left"/>, left + <paramref name="width"/>),
    /// starting a new row when the next does not fit; a name wider than a whole row is shortened with an ellipsis
    /// (its full name stays in the entry's tooltip). Returns the entries and the legend box's height.
    /// </summary>
    public static (IReadOnlyList<LegendEntry> Entries, double Height) Legend(IReadOnlyList<string> names, double left, double top, double width)
    {
        var entries = new List<LegendEntry>();
        double inner = width - (2 * LegendPadding);
        double x = 0;
        int row = 0;
        foreach (string name in names)
        {
            string text = name;
            double maxText = inner - LegendSwatch - LegendGap;
            if (TextWidth(text) > maxText)
            {
                int keep = Math.Max(1, (int)(maxText / TextWidth("x")) - 1);
                text = name[..Math.Min(keep, name.Length)] + "\u2026";
            }
            double w = LegendSwatch + LegendGap + TextWidth(text);
            if (x > 0 && x + w > inner)
            {
                row++;
                x = 0;
            }
            entries.Add(new LegendEntry(left + LegendPadding + x, top + LegendPadding + (LegendRow / 2.0) + (row * LegendRow), text));
            x += w + LegendSpacing;
        }
        double height = names.Count == 0 ? 0 : (2 * LegendPadding) + ((row + 1) * LegendRow);
        return (entries, height);
    }

    /// <summary>The legend's frame (class legend), drawn before its entries.</summary>
    public static void WriteLegendBox(StringBuilder sb, double left, double top, double width, double height) =>
        sb.Append(Inv($"<rect class=\"legend\" x=\"{left:0.##}\" y=\"{top:0.##}\" width=\"{width:0.##}\" height=\"{height:0.##}\" fill=\"none\" stroke=\"#bbb\"/>\n"));

    /// <summary>An entry's text, with the full name as its tooltip when the text was shortened.</summary>
    public static void WriteLegendText(StringBuilder sb, LegendEntry entry, string name)
    {
        string tooltip = entry.Text == name ? "" : $"<title>{Esc(name)}</title>";
        sb.Append(Inv($"<text x=\"{entry.X + LegendSwatch + LegendGap:0.##}\" y=\"{entry.Y + 4:0.##}\">{tooltip}{Esc(entry.Text)}</text>\n"));
    }

    public static string Esc(string s) => SecurityElement.Escape(s) ?? "";

    public static string Inv(FormattableString s) => s.ToString(CultureInfo.InvariantCulture);
}
