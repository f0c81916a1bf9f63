using System.Globalization;
using System.Security;
using System.Text.RegularExpressions;
using ScottPlot;
using ScottPlot.Panels;

namespace Camdoop.Experiments.Reports;

/// <summary>
/// A chart drawn by ScottPlot: the subclasses turn their model (title, labels, series) into a plot, this writes it as
/// an SVG for the documentation and a PNG of the same drawing for anything that shows images only. The legend sits
/// below the plot area, in rows, and the image grows taller when the rows need more room than the default height.
/// </summary>
public abstract partial class Chart
{
    public const int DefaultWidth = 900;
    public const int DefaultHeight = 560;

    /// <summary>The title's and the legend's font sizes, which <see cref="ChartText"/> fits text to.</summary>
    private protected const float TitleSize = 16;
    private protected const float LegendSize = 12;

    /// <summary>
    /// The share of <see cref="Height"/> the plot area keeps at least: a long legend makes the image taller instead of
    /// squeezing the data.
    /// </summary>
    private const double MinimumPlotShare = 0.55;

    private protected static readonly Color[] Palette = [.. new[]
    {
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#17becf", "#7f7f7f", "#e377c2", "#bcbd22", "#393b79", "#000000",
    }.Select(Color.FromHex)];

    public required string Title { get; init; }

    public int Width { get; init; } = DefaultWidth;

    public int Height { get; init; } = DefaultHeight;

    /// <summary>The plot, built afresh from the model: title, axes, series and legend.</summary>
    public Plot ToPlot()
    {
        ChartFont.Register();
        var plot = new Plot();
        Build(plot);
        plot.Font.Set(ChartFont.Family);
        plot.Axes.Title.Label.Text = ChartText.Wrap(Title, Width - 40, TitleSize);
        plot.Axes.Title.Label.FontSize = TitleSize;
        // The label's Bold flag does not reach the typeface it has already resolved: give it the bold face itself.
        plot.Axes.Title.Label.Font = Fonts.GetTypeface(ChartFont.Family, FontWeight.Bold, FontSlant.Upright, FontSpacing.Normal);
        plot.Legend.FontName = ChartFont.Family;
        plot.Legend.FontSize = LegendSize;
        plot.Legend.Orientation = Orientation.Horizontal;
        plot.Legend.TightHorizontalWrapping = true;
        plot.ShowLegend(Edge.Bottom);
        return plot;
    }

    /// <summary>The SVG: text as text (searchable, selectable), in a font-family list that falls back to any sans-serif.</summary>
    public string RenderSvg()
    {
        var (plot, height) = Fitted();
        return Svg(plot, height);
    }

    public byte[] RenderPng()
    {
        var (plot, height) = Fitted();
        return Png(plot, height);
    }

    /// <summary>
    /// Writes the chart as NAME.svg and NAME.png, NAME being <paramref name="path"/> without its extension; returns
    /// both paths.
    /// </summary>
    public IReadOnlyList<string> Save(string path)
    {
        ArgumentNullException.ThrowIfNull(path);
        string svg = Path.ChangeExtension(path, ".svg"), png = Path.ChangeExtension(path, ".png");
        // One layout for both files: fitting the height costs two renders of its own.
        var (plot, height) = Fitted();
        File.WriteAllText(svg, Svg(plot, height));
        File.WriteAllBytes(png, Png(plot, height));
        return [svg, png];
    }

    /// <summary>Adds the model's series and axes to <paramref name="plot"/>.</summary>
    private protected abstract void Build(Plot plot);

    /// <summary>
    /// <see cref="Height"/>, or taller when the legend's rows would squeeze the plot area below
    /// <see cref="MinimumPlotShare"/> of it. ScottPlot sizes the legend's panel by the legend's last layout, which is
    /// bounded by the panel's last size: rather than rendering until that settles, lay the legend out once at the plot
    /// area's width, lock the panel to it, and measure the plot area that leaves.
    /// </summary>
    private (Plot Plot, int Height) Fitted()
    {
        var plot = ToPlot();
        var panel = plot.Axes.GetPanels().OfType<LegendPanel>().Single();
        using (plot.GetImage(Width, Height))
        {
            using var paint = Paint.NewDisposablePaint();
            var layout = plot.Legend.GetLayout(new PixelSize(plot.RenderManager.LastRender.DataRect.Width, float.PositiveInfinity), paint);
            panel.LockSize(layout.LegendRect.Height + panel.Padding.Vertical);
        }
        using (plot.GetImage(Width, Height))
        {
            double plotHeight = plot.RenderManager.LastRender.DataRect.Height, minimum = Height * MinimumPlotShare;
            return (plot, plotHeight >= minimum ? Height : Height + (int)Math.Ceiling(minimum - plotHeight));
        }
    }

    private string Svg(Plot plot, int height)
    {
        string svg = NumberClipPaths(plot.GetSvgXml(Width, height))
            .Replace($"font-family=\"{ChartFont.Family}\"", $"font-family=\"{ChartFont.SvgFamilies}\"", StringComparison.Ordinal);
        // The title as the document's title too: what a browser's tab and a screen reader show.
        int open = svg.IndexOf('>', svg.IndexOf("<svg", StringComparison.Ordinal)) + 1;
        return svg.Insert(open, $"\n\t<title>{SecurityElement.Escape(Title)}</title>");
    }

    /// <summary>
    /// Skia names clip paths from a counter shared by every drawing in the process, so the same chart drawn twice
    /// came out different: numbered again from 1 in each document, a chart redrawn from its CSV is the same file.
    /// </summary>
    private static string NumberClipPaths(string svg)
    {
        var numbers = new Dictionary<string, int>(StringComparer.Ordinal);
        return ClipPathId().Replace(svg, m =>
        {
            if (!numbers.TryGetValue(m.Value, out int n))
            {
                n = numbers.Count + 1;
                numbers[m.Value] = n;
            }
            return string.Create(CultureInfo.InvariantCulture, $"cl_{n}");
        });
    }

    [GeneratedRegex(@"\bcl_[0-9a-f]+\b")]
    private static partial Regex ClipPathId();

    private byte[] Png(Plot plot, int height)
    {
        using var image = plot.GetImage(Width, height);
        return image.GetImageBytes(ImageFormat.Png);
    }

    /// <summary>A series' name as its legend shows it: shortened when it would not fit one row.</summary>
    private protected string LegendName(string name) => ChartText.Shorten(name, Width - 120, LegendSize);
}
