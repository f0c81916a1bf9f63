using System.Text;
using static Camdoop.Experiments.Reports.SvgLayout;

namespace Camdoop.Experiments.Reports;

/// <summary>
/// Writes a self-contained SVG grouped bar chart: one group of bars per category, one bar per series (reference
/// series hatched in grey, like the paper's numbers beside measured ones; an approximate reference value as a band
/// with whiskers over its range), round ticks (<see cref="NiceAxis"/>), a horizontal guide line, and a legend below
/// the plot that wraps into rows.
/// </summary>
public sealed class SvgBarChart
{
    private const int Width = 800;
    private const int Left = 70;
    private const int Right = 30;
    private const int PlotHeight = 330;

    private static readonly string[] Palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"];

    public required string Title { get; init; }

    public required string YLabel { get; init; }

    public required IReadOnlyList<string> Categories { get; init; }

    /// <summary>A dashed horizontal line at this value (1 for normalised times), or null.</summary>
    public double? Guide { get; init; }

    public List<BarSeries> Series { get; } = [];

    public string Render()
    {
        var values = Series.SelectMany(s => s.Values).Where(v => !double.IsNaN(v)).ToList();
        if (values.Count == 0 || Categories.Count == 0)
        {
            throw new InvalidOperationException("a bar chart needs at least one category and one value");
        }
        if (Series.Any(s => s.Values.Count != Categories.Count))
        {
            throw new InvalidOperationException("every series needs one value per category");
        }
        var highs = Series.SelectMany(s => Enumerable.Range(0, Categories.Count).Select(c => s.RangeAt(c)?.High ?? double.NaN)).Where(v => !double.IsNaN(v));
        // Room above the tallest bar for its label.
        double top0 = Math.Max(values.Concat(highs).Max(), Guide ?? 0) * 1.08;
        var ticks = NiceAxis.Ticks(0, top0 <= 0 ? 1 : top0);
        var labels = NiceAxis.Labels(ticks);
        double yHi = ticks[^1];

        double plotW = Width - Left - Right, plotH = PlotHeight;
        var titleLines = TitleLines(Title, Width - 20);
        double top = 42 + ((titleLines.Count - 1) * TitleLineHeight);
        double bottom = top + plotH;
        double Y(double v) => bottom - (v / yHi * plotH);
        double group = plotW / Categories.Count;
        double bar = group * 0.8 / Series.Count;

        // The legend: every series, and what a range means when one is drawn.
        var names = Series.Select(s => s.Name).ToList();
        var ranged = Series.Where(s => Enumerable.Range(0, Categories.Count).Any(c => s.RangeAt(c) is not null)).ToList();
        names.AddRange(ranged.Select(s => $"{s.Name}, approximate (range)"));
        double legendTop = bottom + 34;
        var (entries, legendHeight) = Legend(names, 10, legendTop, Width - 20);
        double height = Math.Ceiling(legendTop + legendHeight + 10);

        var sb = new StringBuilder();
        sb.Append(Inv($"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{height}\" viewBox=\"0 0 {Width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n"));
        sb.Append(Inv($"<title>{Esc(Title)}</title>\n"));
        sb.Append(Inv($"<rect width=\"{Width}\" height=\"{height}\" fill=\"white\"/>\n"));
        sb.Append("<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
            + "<rect width=\"6\" height=\"6\" fill=\"#ddd\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#888\" stroke-width=\"2\"/></pattern></defs>\n");
        WriteTitle(sb, titleLines, Left + (plotW / 2));
        for (int i = 0; i < ticks.Count; i++)
        {
            double y = Y(ticks[i]);
            sb.Append(Inv($"<line x1=\"{Left}\" y1=\"{y:0.##}\" x2=\"{Left + plotW}\" y2=\"{y:0.##}\" stroke=\"#ddd\"/>\n"));
            sb.Append(Inv($"<text class=\"ytick\" x=\"{Left - 6}\" y=\"{y + 4:0.##}\" text-anchor=\"end\">{labels[i]}</text>\n"));
        }
        for (int c = 0; c < Categories.Count; c++)
        {
            double x0 = Left + (c * group) + (group * 0.1);
            for (int s = 0; s < Series.Count; s++)
            {
                double v = Series[s].Values[c];
                if (double.IsNaN(v))
                {
                    continue;
                }
                double x = x0 + (s * bar), w = bar * 0.92, mid = x + (w / 2);
                if (Series[s].RangeAt(c) is { } range)
                {
                    WriteRange(sb, "range", x, w, Y(range.Low), Y(range.High), Y(range.Value));
                    sb.Append(Inv($"<text x=\"{mid:0.##}\" y=\"{Y(range.High) - 4:0.##}\" text-anchor=\"middle\" font-size=\"10\">~{NiceAxis.FormatValue(v)}</text>\n"));
                    continue;
                }
                string fill = Series[s].Reference ? "url(#hatch)" : Palette[s % Palette.Length];
                sb.Append(Inv($"<rect x=\"{x:0.##}\" y=\"{Y(v):0.##}\" width=\"{w:0.##}\" height=\"{Y(0) - Y(v):0.##}\" fill=\"{fill}\" stroke=\"#333\" stroke-width=\"0.5\"/>\n"));
                sb.Append(Inv($"<text x=\"{mid:0.##}\" y=\"{Y(v) - 4:0.##}\" text-anchor=\"middle\" font-size=\"10\">{v:0.00}</text>\n"));
            }
            sb.Append(Inv($"<text x=\"{Left + (c * group) + (group / 2):0.##}\" y=\"{bottom + 18}\" text-anchor=\"middle\">{Esc(Categories[c])}</text>\n"));
        }
        if (Guide is { } guide)
        {
            sb.Append(Inv($"<line x1=\"{Left}\" y1=\"{Y(guide):0.##}\" x2=\"{Left + plotW}\" y2=\"{Y(guide):0.##}\" stroke=\"#333\" stroke-dasharray=\"6,4\"/>\n"));
        }
        sb.Append(Inv($"<rect x=\"{Left}\" y=\"{top}\" width=\"{plotW}\" height=\"{plotH}\" fill=\"none\" stroke=\"#333\"/>\n"));
        sb.Append(Inv($"<text transform=\"translate(20,{top + (plotH / 2)}) rotate(-90)\" text-anchor=\"middle\">{Esc(YLabel)}</text>\n"));

        WriteLegendBox(sb, 10, legendTop, Width - 20, legendHeight);
        for (int i = 0; i < names.Count; i++)
        {
            var e = entries[i];
            if (i < Series.Count)
            {
                string fill = Series[i].Reference ? "url(#hatch)" : Palette[i % Palette.Length];
                sb.Append(Inv($"<rect x=\"{e.X:0.##}\" y=\"{e.Y - 6:0.##}\" width=\"{LegendSwatch}\" height=\"12\" fill=\"{fill}\" stroke=\"#333\" stroke-width=\"0.5\"/>\n"));
            }
            else
            {
                WriteRange(sb, "range-key", e.X + 4, LegendSwatch - 8, e.Y + 7, e.Y - 7, e.Y);
            }
            WriteLegendText(sb, e, names[i]);
        }
        sb.Append("</svg>\n");
        return sb.ToString();
    }

    public void Save(string path) => File.WriteAllText(path, Render());

    /// <summary>
    /// An approximate value (class range; range-key in the legend): a light hatched band from low to high, whiskers
    /// with caps, a dotted mark at the value.
    /// </summary>
    private static void WriteRange(StringBuilder sb, string cssClass, double x, double w, double yLow, double yHigh, double yValue)
    {
        double mid = x + (w / 2), cap = w / 4;
        sb.Append(Inv($"<g class=\"{cssClass}\">"));
        sb.Append(Inv($"<rect x=\"{x:0.##}\" y=\"{yHigh:0.##}\" width=\"{w:0.##}\" height=\"{yLow - yHigh:0.##}\" fill=\"url(#hatch)\" fill-opacity=\"0.45\" stroke=\"none\"/>"));
        sb.Append(Inv($"<line x1=\"{mid:0.##}\" y1=\"{yLow:0.##}\" x2=\"{mid:0.##}\" y2=\"{yHigh:0.##}\" stroke=\"#333\" stroke-width=\"1.5\"/>"));
        sb.Append(Inv($"<line x1=\"{mid - cap:0.##}\" y1=\"{yLow:0.##}\" x2=\"{mid + cap:0.##}\" y2=\"{yLow:0.##}\" stroke=\"#333\" stroke-width=\"1.5\"/>"));
        sb.Append(Inv($"<line x1=\"{mid - cap:0.##}\" y1=\"{yHigh:0.##}\" x2=\"{mid + cap:0.##}\" y2=\"{yHigh:0.##}\" stroke=\"#333\" stroke-width=\"1.5\"/>"));
        sb.Append(Inv($"<line x1=\"{x:0.##}\" y1=\"{yValue:0.##}\" x2=\"{x + w:0.##}\" y2=\"{yValue:0.##}\" stroke=\"#333\" stroke-width=\"1\" stroke-dasharray=\"2,2\"/>"));
        sb.Append("</g>\n");
    }
}
