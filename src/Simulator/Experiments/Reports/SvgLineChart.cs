using System.Text;
using static Camdoop.Experiments.Reports.SvgLayout;

namespace Camdoop.Experiments.Reports;

/// <summary>
/// Writes a self-contained SVG line chart: linear x axis, optional log-scale y axis (as in the paper's figures),
/// round ticks (<see cref="NiceAxis"/>), grid lines, markers, and a legend below the plot that wraps into rows.
/// No dependencies; opens in any browser.
/// </summary>
public sealed class SvgLineChart
{
    private const int Width = 800;
    private const int Left = 80;
    private const int Right = 30;
    private const int PlotHeight = 320;

    private static readonly string[] Palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#7f7f7f", "#e377c2", "#bcbd22", "#393b79", "#000000"];

    // Dashed series (bounds) often coincide; distinct patterns keep each visible.
    private static readonly string[] DashPatterns = ["8,4", "3,3", "12,3,3,3", "2,6"];

    public required string Title { get; init; }

    public required string XLabel { get; init; }

    public required string YLabel { get; init; }

    public bool LogY { get; init; } = true;

    /// <summary>Labels for x ticks (e.g. 2^x for a log2 axis); default prints the value.</summary>
    public Func<double, string>? XTickFormat { get; init; }

    public List<ChartSeries> Series { get; } = [];

    public string Render()
    {
        var points = Series.SelectMany(s => s.Points).Where(p => !LogY || p.Y > 0).ToList();
        if (points.Count == 0)
        {
            throw new InvalidOperationException("a chart needs at least one point");
        }
        double xMin = points.Min(p => p.X), xMax = points.Max(p => p.X);
        if (xMax == xMin)
        {
            xMax = xMin + 1;
        }
        double yMin = points.Min(p => p.Y), yMax = points.Max(p => p.Y);
        IReadOnlyList<double> yTicks = LogY ? NiceAxis.LogTicks(yMin, yMax) : NiceAxis.Ticks(Math.Min(0, yMin), yMax);
        IReadOnlyList<string> yLabels = LogY ? [.. yTicks.Select(NiceAxis.FormatPowerOfTen)] : NiceAxis.Labels(yTicks);
        double yLo = yTicks[0], yHi = yTicks[^1];

        double plotW = Width - Left - Right, plotH = PlotHeight;
        var titleLines = TitleLines(Title, Width - 20);
        double top = 42 + ((titleLines.Count - 1) * TitleLineHeight);
        double bottom = top + plotH;
        double X(double x) => Left + ((x - xMin) / (xMax - xMin) * plotW);
        double Y(double y) => LogY
            ? bottom - ((Math.Log10(y) - Math.Log10(yLo)) / (Math.Log10(yHi) - Math.Log10(yLo)) * plotH)
            : bottom - ((y - yLo) / (yHi - yLo) * plotH);

        var names = Series.Select(s => s.Name).ToList();
        double legendTop = bottom + 54;
        var (entries, legendHeight) = Legend(names, 10, legendTop, Width - 20);
        double height = Math.Ceiling(legendTop + legendHeight + 10);

        var sb = new StringBuilder();
        sb.Append(Inv($"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{height}\" viewBox=\"0 0 {Width} {height}\" font-family=\"sans-serif\" font-size=\"12\">\n"));
        sb.Append(Inv($"<title>{Esc(Title)}</title>\n"));
        sb.Append(Inv($"<rect width=\"{Width}\" height=\"{height}\" fill=\"white\"/>\n"));
        WriteTitle(sb, titleLines, Left + (plotW / 2));

        // Y grid and labels.
        for (int i = 0; i < yTicks.Count; i++)
        {
            double y = Y(yTicks[i]);
            sb.Append(Inv($"<line x1=\"{Left}\" y1=\"{y:0.##}\" x2=\"{Left + plotW}\" y2=\"{y:0.##}\" stroke=\"#ddd\"/>\n"));
            sb.Append(Inv($"<text class=\"ytick\" x=\"{Left - 6}\" y=\"{y + 4:0.##}\" text-anchor=\"end\">{yLabels[i]}</text>\n"));
            for (int m = 2; LogY && i + 1 < yTicks.Count && m < 10; m++)
            {
                double ym = Y(yTicks[i] * m);
                sb.Append(Inv($"<line x1=\"{Left}\" y1=\"{ym:0.##}\" x2=\"{Left + plotW}\" y2=\"{ym:0.##}\" stroke=\"#f3f3f3\"/>\n"));
            }
        }
        // X ticks at the data's x values (few distinct values in a sweep), else round ones.
        var xs = points.Select(p => p.X).Distinct().OrderBy(x => x).ToList();
        var xTicks = xs.Select(x => (Value: x, Label: XTickFormat?.Invoke(x) ?? NiceAxis.FormatValue(x))).ToList();
        if (xs.Count > 12)
        {
            var round = NiceAxis.Ticks(xMin, xMax, 8);
            xTicks = [.. round.Zip(NiceAxis.Labels(round), (x, label) => (Value: x, Label: XTickFormat?.Invoke(x) ?? label))
                .Where(t => t.Value >= xMin - 1e-9 && t.Value <= xMax + 1e-9)];
        }
        foreach (var (xv, label) in xTicks)
        {
            double x = X(xv);
            sb.Append(Inv($"<line x1=\"{x:0.##}\" y1=\"{top}\" x2=\"{x:0.##}\" y2=\"{bottom}\" stroke=\"#eee\"/>\n"));
            sb.Append(Inv($"<text class=\"xtick\" x=\"{x:0.##}\" y=\"{bottom + 18}\" text-anchor=\"middle\">{Esc(label)}</text>\n"));
        }
        sb.Append(Inv($"<rect x=\"{Left}\" y=\"{top}\" width=\"{plotW}\" height=\"{plotH}\" fill=\"none\" stroke=\"#333\"/>\n"));
        sb.Append(Inv($"<text x=\"{Left + (plotW / 2)}\" y=\"{bottom + 38}\" text-anchor=\"middle\">{Esc(XLabel)}</text>\n"));
        sb.Append(Inv($"<text transform=\"translate(20,{top + (plotH / 2)}) rotate(-90)\" text-anchor=\"middle\">{Esc(YLabel)}{(LogY ? " (log scale)" : "")}</text>\n"));

        WriteLegendBox(sb, 10, legendTop, Width - 20, legendHeight);
        int dashed = 0;
        for (int i = 0; i < Series.Count; i++)
        {
            var s = Series[i];
            string color = Palette[i % Palette.Length];
            string dash = s.Dashed ? $" stroke-dasharray=\"{DashPatterns[dashed++ % DashPatterns.Length]}\"" : "";
            var pts = s.Points.Where(p => !LogY || p.Y > 0).OrderBy(p => p.X).ToList();
            if (pts.Count > 0)
            {
                string path = string.Join(' ', pts.Select(p => Inv($"{X(p.X):0.##},{Y(p.Y):0.##}")));
                sb.Append(Inv($"<polyline points=\"{path}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\n"));
                if (!s.Dashed)
                {
                    foreach (var p in pts)
                    {
                        sb.Append(Inv($"<circle cx=\"{X(p.X):0.##}\" cy=\"{Y(p.Y):0.##}\" r=\"3.5\" fill=\"{color}\"/>\n"));
                    }
                }
            }
            var e = entries[i];
            sb.Append(Inv($"<line x1=\"{e.X:0.##}\" y1=\"{e.Y:0.##}\" x2=\"{e.X + LegendSwatch:0.##}\" y2=\"{e.Y:0.##}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\n"));
            WriteLegendText(sb, e, s.Name);
        }
        sb.Append("</svg>\n");
        return sb.ToString();
    }

    public void Save(string path) => File.WriteAllText(path, Render());
}
