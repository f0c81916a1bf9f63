using System.Globalization;
using System.Security;
using System.Text;

namespace Camdoop.Experiments.Reports;

/// <summary>
/// Writes a self-contained SVG grouped bar chart: one group of bars per category, one bar per series (reference
/// series hatched in grey, like the paper's numbers beside measured ones), a horizontal guide line, a legend.
/// </summary>
public sealed class SvgBarChart
{
    private const int Width = 800;
    private const int Height = 440;
    private const int Left = 70;
    private const int Right = 230;
    private const int Top = 40;
    private const int Bottom = 70;

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
        double yHi = Math.Max(values.Max(), Guide ?? 0) * 1.15;
        yHi = yHi <= 0 ? 1 : yHi;
        double plotW = Width - Left - Right, plotH = Height - Top - Bottom;
        double Y(double v) => Top + plotH - (v / yHi * plotH);
        double group = plotW / Categories.Count;
        double bar = group * 0.8 / Series.Count;

        var sb = new StringBuilder();
        sb.Append(Inv($"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{Width}\" height=\"{Height}\" viewBox=\"0 0 {Width} {Height}\" font-family=\"sans-serif\" font-size=\"12\">\n"));
        sb.Append(Inv($"<rect width=\"{Width}\" height=\"{Height}\" fill=\"white\"/>\n"));
        sb.Append("<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
            + "<rect width=\"6\" height=\"6\" fill=\"#ddd\"/><line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#888\" stroke-width=\"2\"/></pattern></defs>\n");
        sb.Append(Inv($"<text x=\"{Left + (plotW / 2)}\" y=\"22\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">{Esc(Title)}</text>\n"));
        for (int i = 0; i <= 5; i++)
        {
            double v = yHi * i / 5;
            double y = Y(v);
            sb.Append(Inv($"<line x1=\"{Left}\" y1=\"{y:0.##}\" x2=\"{Left + plotW}\" y2=\"{y:0.##}\" stroke=\"#ddd\"/>\n"));
            sb.Append(Inv($"<text x=\"{Left - 6}\" y=\"{y + 4:0.##}\" text-anchor=\"end\">{v:0.##}</text>\n"));
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
                string fill = Series[s].Reference ? "url(#hatch)" : Palette[s % Palette.Length];
                double x = x0 + (s * bar);
                sb.Append(Inv($"<rect x=\"{x:0.##}\" y=\"{Y(v):0.##}\" width=\"{bar * 0.92:0.##}\" height=\"{Y(0) - Y(v):0.##}\" fill=\"{fill}\" stroke=\"#333\" stroke-width=\"0.5\"/>\n"));
                sb.Append(Inv($"<text x=\"{x + (bar * 0.46):0.##}\" y=\"{Y(v) - 4:0.##}\" text-anchor=\"middle\" font-size=\"10\">{v:0.00}</text>\n"));
            }
            sb.Append(Inv($"<text x=\"{Left + (c * group) + (group / 2):0.##}\" y=\"{Top + plotH + 18}\" text-anchor=\"middle\">{Esc(Categories[c])}</text>\n"));
        }
        if (Guide is { } guide)
        {
            sb.Append(Inv($"<line x1=\"{Left}\" y1=\"{Y(guide):0.##}\" x2=\"{Left + plotW}\" y2=\"{Y(guide):0.##}\" stroke=\"#333\" stroke-dasharray=\"6,4\"/>\n"));
        }
        sb.Append(Inv($"<rect x=\"{Left}\" y=\"{Top}\" width=\"{plotW}\" height=\"{plotH}\" fill=\"none\" stroke=\"#333\"/>\n"));
        sb.Append(Inv($"<text transform=\"translate(20,{Top + (plotH / 2)}) rotate(-90)\" text-anchor=\"middle\">{Esc(YLabel)}</text>\n"));
        for (int s = 0; s < Series.Count; s++)
        {
            double ly = Top + 10 + (s * 20);
            double lx = Left + plotW + 14;
            string fill = Series[s].Reference ? "url(#hatch)" : Palette[s % Palette.Length];
            sb.Append(Inv($"<rect x=\"{lx}\" y=\"{ly - 6}\" width=\"18\" height=\"12\" fill=\"{fill}\" stroke=\"#333\" stroke-width=\"0.5\"/>\n"));
            sb.Append(Inv($"<text x=\"{lx + 24}\" y=\"{ly + 4}\">{Esc(Series[s].Name)}</text>\n"));
        }
        sb.Append("</svg>\n");
        return sb.ToString();
    }

    public void Save(string path) => File.WriteAllText(path, Render());

    private static string Esc(string s) => SecurityElement.Escape(s) ?? "";

    private static string Inv(FormattableString s) => s.ToString(CultureInfo.InvariantCulture);
}
