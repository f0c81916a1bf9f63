using ScottPlot;
using ScottPlot.TickGenerators;

namespace Camdoop.Experiments.Reports;

/// <summary>
/// A grouped bar chart: one group of bars per category, one bar per series (reference series hatched in grey, like
/// the paper's numbers beside measured ones; an approximate reference value as a band with whiskers over its range),
/// round ticks (<see cref="NiceAxis"/>) and a dashed horizontal guide line.
/// </summary>
public sealed class BarChart : Chart
{
    private static readonly Color Ink = Color.FromHex("#333333");
    private static readonly Color HatchBackground = Color.FromHex("#dddddd");
    private static readonly Color HatchLines = Color.FromHex("#888888");

    public required string YLabel { get; init; }

    public required IReadOnlyList<string> Categories { get; init; }

    /// <summary>A dashed horizontal line at this value (1 for normalised times), or null.</summary>
    public double? Guide { get; init; }

    public List<BarSeries> Series { get; } = [];

    private protected override void Build(Plot plot)
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
        double top = Math.Max(values.Concat(highs).Max(), Guide ?? 0) * 1.08;
        var ticks = NiceAxis.Ticks(0, top <= 0 ? 1 : top);
        var yTicks = new NumericManual();
        foreach (var (tick, label) in ticks.Zip(NiceAxis.Labels(ticks)))
        {
            yTicks.AddMajor(tick, label);
        }
        plot.Axes.Left.TickGenerator = yTicks;
        var xTicks = new NumericManual();
        for (int c = 0; c < Categories.Count; c++)
        {
            xTicks.AddMajor(c, Categories[c]);
        }
        plot.Axes.Bottom.TickGenerator = xTicks;
        plot.Axes.Bottom.MajorTickStyle.Length = 0;

        double width = 0.8 / Series.Count;
        // Ranges after every series' bars: the legend lists the plottables in order, series first.
        var ranges = new List<(double Centre, PaperValue Range, string? Legend)>();
        for (int s = 0; s < Series.Count; s++)
        {
            var series = Series[s];
            var bars = new List<Bar>();
            bool rangeInLegend = false;
            for (int c = 0; c < Categories.Count; c++)
            {
                double v = series.Values[c], centre = c - 0.4 + (width * (s + 0.5));
                if (double.IsNaN(v))
                {
                    continue;
                }
                if (series.RangeAt(c) is { } range)
                {
                    ranges.Add((centre, range, rangeInLegend ? null : LegendName($"{series.Name}, approximate (range)")));
                    rangeInLegend = true;
                    continue;
                }
                bars.Add(new Bar
                {
                    Position = centre,
                    Value = v,
                    Size = width * 0.92,
                    FillColor = series.Reference ? HatchBackground : Palette[s % Palette.Length],
                    FillHatch = series.Reference ? new ScottPlot.Hatches.Striped() : null,
                    FillHatchColor = HatchLines,
                    LineColor = Ink,
                    LineWidth = 0.5f,
                    Label = v.ToString("0.00", System.Globalization.CultureInfo.InvariantCulture),
                });
            }
            var plottable = plot.Add.Bars(bars);
            plottable.ValueLabelStyle.FontSize = 10;
            plottable.ValueLabelStyle.FontName = ChartFont.Family;
            // A legend entry of our own: ScottPlot's for a bar plot has its colour but not its hatch.
            plot.Legend.ManualItems.Add(new LegendItem
            {
                LabelText = LegendName(series.Name),
                FillColor = series.Reference ? HatchBackground : Palette[s % Palette.Length],
                FillHatch = series.Reference ? new ScottPlot.Hatches.Striped() : null,
                FillHatchColor = HatchLines,
                OutlineColor = Ink,
                OutlineWidth = 0.5f,
            });
        }
        foreach (var (centre, range, legend) in ranges)
        {
            AddRange(plot, centre, width * 0.92, range, legend);
        }
        if (Guide is { } guide)
        {
            var line = plot.Add.HorizontalLine(guide, 1, Ink, LinePattern.Dashed);
            line.LegendText = "";
        }
        plot.Axes.SetLimits(-0.5, Categories.Count - 0.5, 0, ticks[^1]);
        plot.Axes.Left.Label.Text = YLabel;
    }

    /// <summary>
    /// An approximate value: a light hatched band from its low to its high end, whiskers with caps, a dotted mark at the
    /// value and its "~" label above.
    /// </summary>
    private static void AddRange(Plot plot, double centre, double width, PaperValue range, string? legend)
    {
        double left = centre - (width / 2), right = centre + (width / 2), cap = width / 4;
        var band = plot.Add.Rectangle(left, right, range.Low, range.High);
        band.FillStyle.Color = HatchBackground.WithAlpha(0.45);
        band.FillStyle.Hatch = new ScottPlot.Hatches.Striped();
        band.FillStyle.HatchColor = HatchLines.WithAlpha(0.45);
        band.LineStyle.Width = 0;
        if (legend is not null)
        {
            plot.Legend.ManualItems.Add(new LegendItem
            {
                LabelText = legend,
                FillColor = band.FillStyle.Color,
                FillHatch = band.FillStyle.Hatch,
                FillHatchColor = band.FillStyle.HatchColor,
            });
        }
        foreach (var (x1, y1, x2, y2) in new[] { (centre, range.Low, centre, range.High), (centre - cap, range.Low, centre + cap, range.Low), (centre - cap, range.High, centre + cap, range.High) })
        {
            var whisker = plot.Add.Line(x1, y1, x2, y2);
            whisker.LineColor = Ink;
            whisker.LineWidth = 1.5f;
            whisker.MarkerSize = 0;
        }
        var mark = plot.Add.Line(left, range.Value, right, range.Value);
        mark.LineColor = Ink;
        mark.LineWidth = 1;
        mark.LinePattern = LinePattern.Dotted;
        mark.MarkerSize = 0;
        var label = plot.Add.Text("~" + NiceAxis.FormatValue(range.Value), centre, range.High);
        label.LabelFontSize = 10;
        label.LabelFontName = ChartFont.Family;
        label.LabelAlignment = Alignment.LowerCenter;
        label.OffsetY = -3;
    }
}
