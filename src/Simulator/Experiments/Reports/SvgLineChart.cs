using System.Globalization;
using System.Security;
using System.Text;

namespace Camdoop.Experiments.Reports;

/// <summary>
/// Writes a self-contained SVG line chart: linear x axis, optional log-scale y axis (as in the paper's figures),
/// grid lines, markers, a legend. No dependencies; opens in any browser.
/// </summary>
public sealed class SvgLineChart
{
    private const int Width = 800;
    private const int Height = 440;
    private const int Left = 80;
    private const int Right = 250;
    private const int Top = 40;
    private const int Bottom = 60;

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
        double yLo, yHi;
        if (LogY)
        {
            yLo = Math.Pow(10, Math.Floor(Math.Log10(yMin)));
            yHi = Math.Pow(10, Math.Ceiling(Math.Log10(yMax)));
            if (yHi <= yLo)
            {
                yHi = yLo * 10;
            }
        }
        else
        {
            yLo = 0;
            yHi = yMax <= 0 ? 1 : yMax * 1.1;
        }
        double plotW = Width - Left - Right, plotH = Height - Top - Bottom;
        double X(double x) => Left + ((x - xMin) / (xMax - xMin) * plotW);
        double Y(double y) => LogY
            ? Top + plotH - ((Math.Log10(y) - Math.Log10(yLo)) / (Math.Log10(yHi) - Math.Log10(yLo)) * plotH)
            : Top + plotH - ((y - yLo) / (yHi - yLo) * plotH);

        var sb = new StringBuilder();
        sb.Append(Inv($"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{Height}\" viewBox=\"0 0 {Width} {Height}\" font-family=\"sans-serif\" font-size=\"12\">\n"));
        sb.Append(Inv($"<rect width=\"{Width}\" height=\"{Height}\" fill=\"white\"/>\n"));
        sb.Append(Inv($"<text x=\"{Left + (plotW / 2)}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{Esc(Title)}</text>\n"));

        // Y grid and labels.
        if (LogY)
        {
            for (double d = yLo; d <= yHi * 1.0001; d *= 10)
            {
                double y = Y(d);
                sb.Append(Inv($"<line x1=\"{Left}\" y1=\"{y:0.##}\" x2=\"{Left + plotW}\" y2=\"{y:0.##}\" stroke=\"#ddd\"/>\n"));
                sb.Append(Inv($"<text x=\"{Left - 6}\" y=\"{y + 4:0.##}\" text-anchor=\"end\">{FormatTick(d)}</text>\n"));
                for (int m = 2; m < 10 && d * m < yHi; m++)
                {
                    double ym = Y(d * m);
                    sb.Append(Inv($"<line x1=\"{Left}\" y1=\"{ym:0.##}\" x2=\"{Left + plotW}\" y2=\"{ym:0.##}\" stroke=\"#f3f3f3\"/>\n"));
                }
            }
        }
        else
        {
            for (int i = 0; i <= 5; i++)
            {
                double v = yLo + ((yHi - yLo) * i / 5);
                double y = Y(v);
                sb.Append(Inv($"<line x1=\"{Left}\" y1=\"{y:0.##}\" x2=\"{Left + plotW}\" y2=\"{y:0.##}\" stroke=\"#ddd\"/>\n"));
                sb.Append(Inv($"<text x=\"{Left - 6}\" y=\"{y + 4:0.##}\" text-anchor=\"end\">{FormatTick(v)}</text>\n"));
            }
        }
        // X ticks at the data's x values (few distinct values in a sweep), else 6 even ticks.
        var xs = points.Select(p => p.X).Distinct().OrderBy(x => x).ToList();
        if (xs.Count > 12)
        {
            xs = Enumerable.Range(0, 6).Select(i => xMin + ((xMax - xMin) * i / 5)).ToList();
        }
        foreach (double xv in xs)
        {
            double x = X(xv);
            sb.Append(Inv($"<line x1=\"{x:0.##}\" y1=\"{Top}\" x2=\"{x:0.##}\" y2=\"{Top + plotH}\" stroke=\"#eee\"/>\n"));
            sb.Append(Inv($"<text x=\"{x:0.##}\" y=\"{Top + plotH + 18}\" text-anchor=\"middle\">{Esc(XTickFormat?.Invoke(xv) ?? FormatTick(xv))}</text>\n"));
        }
        sb.Append(Inv($"<rect x=\"{Left}\" y=\"{Top}\" width=\"{plotW}\" height=\"{plotH}\" fill=\"none\" stroke=\"#333\"/>\n"));
        sb.Append(Inv($"<text x=\"{Left + (plotW / 2)}\" y=\"{Height - 18}\" text-anchor=\"middle\">{Esc(XLabel)}</text>\n"));
        sb.Append(Inv($"<text transform=\"translate(20,{Top + (plotH / 2)}) rotate(-90)\" text-anchor=\"middle\">{Esc(YLabel)}{(LogY ? " (log scale)" : "")}</text>\n"));

        int dashed = 0;
        for (int i = 0; i < Series.Count; i++)
        {
            var s = Series[i];
            string color = Palette[i % Palette.Length];
            var pts = s.Points.Where(p => !LogY || p.Y > 0).OrderBy(p => p.X).ToList();
            if (pts.Count == 0)
            {
                continue;
            }
            string path = string.Join(' ', pts.Select(p => Inv($"{X(p.X):0.##},{Y(p.Y):0.##}")));
            string dash = s.Dashed ? $" stroke-dasharray=\"{DashPatterns[dashed++ % DashPatterns.Length]}\"" : "";
            sb.Append(Inv($"<polyline points=\"{path}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\n"));
            if (!s.Dashed)
            {
                foreach (var p in pts)
                {
                    sb.Append(Inv($"<circle cx=\"{X(p.X):0.##}\" cy=\"{Y(p.Y):0.##}\" r=\"3.5\" fill=\"{color}\"/>\n"));
                }
            }
            double ly = Top + 10 + (i * 20);
            double lx = Left + plotW + 14;
            sb.Append(Inv($"<line x1=\"{lx}\" y1=\"{ly}\" x2=\"{lx + 24}\" y2=\"{ly}\" stroke=\"{color}\" stroke-width=\"2\"{dash}/>\n"));
            sb.Append(Inv($"<text x=\"{lx + 30}\" y=\"{ly + 4}\">{Esc(s.Name)}</text>\n"));
        }
        sb.Append("</svg>\n");
        return sb.ToString();
    }

    public void Save(string path) => File.WriteAllText(path, Render());

    private static string FormatTick(double v) => v switch
    {
        0 => "0",
        >= 1000 or < 0.0001 => v.ToString("0.##E+0", CultureInfo.InvariantCulture),
        _ => v.ToString("0.####", CultureInfo.InvariantCulture),
    };

    private static string Esc(string s) => SecurityElement.Escape(s) ?? "";

    private static string Inv(FormattableString s) => s.ToString(CultureInfo.InvariantCulture);
}
