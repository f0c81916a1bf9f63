using ScottPlot;
using ScottPlot.TickGenerators;

namespace Camdoop.Experiments.Reports;

/// <summary>
/// A line chart: linear x axis, optional log-scale y axis (as in the paper's figures), round ticks
/// (<see cref="NiceAxis"/>, given to ScottPlot as manual ticks), markers on measured series, distinct dashes on bounds.
/// </summary>
public sealed class LineChart : Chart
{
    // Dashed series (bounds) often coincide; distinct patterns keep each visible.
    private static readonly LinePattern[] DashPatterns = [LinePattern.Dashed, LinePattern.Dotted, LinePattern.DenselyDashed, new LinePattern([12, 4, 3, 4], 0, "dash-dot")];

    public required string XLabel { get; init; }

    public required string YLabel { get; init; }

    public bool LogY { get; init; } = true;

    /// <summary>Labels for x ticks (e.g. 2^x for a log2 axis); default prints the value.</summary>
    public Func<double, string>? XTickFormat { get; init; }

    public List<ChartSeries> Series { get; } = [];

    private protected override void Build(Plot plot)
    {
        var points = Series.SelectMany(s => s.Points).Where(p => !LogY || p.Y > 0).ToList();
        if (points.Count == 0)
        {
            throw new InvalidOperationException("a chart needs at least one point");
        }
        // ScottPlot's axes are linear: a log axis plots log10(y) and labels its ticks with the powers of ten.
        double Y(double y) => LogY ? Math.Log10(y) : y;
        double xMin = points.Min(p => p.X), xMax = points.Max(p => p.X);
        double yMin = points.Min(p => p.Y), yMax = points.Max(p => p.Y);

        var yTicks = new NumericManual();
        IReadOnlyList<double> ys = LogY ? NiceAxis.LogTicks(yMin, yMax) : NiceAxis.Ticks(Math.Min(0, yMin), yMax);
        IReadOnlyList<string> yLabels = LogY ? [.. ys.Select(NiceAxis.FormatPowerOfTen)] : NiceAxis.Labels(ys);
        for (int i = 0; i < ys.Count; i++)
        {
            yTicks.AddMajor(Y(ys[i]), yLabels[i]);
            for (int m = 2; LogY && i + 1 < ys.Count && m < 10; m++)
            {
                yTicks.AddMinor(Y(ys[i] * m));
            }
        }
        plot.Axes.Left.TickGenerator = yTicks;

        // X ticks at the data's x values (few distinct values in a sweep), else round ones.
        var xTicks = new NumericManual();
        var xs = points.Select(p => p.X).Distinct().Order().ToList();
        if (xs.Count > 12)
        {
            var round = NiceAxis.Ticks(xMin, xMax, 8);
            xs = [.. round.Where(x => x >= xMin - 1e-9 && x <= xMax + 1e-9)];
            var labels = NiceAxis.Labels(round);
            foreach (var (x, label) in round.Zip(labels).Where(t => xs.Contains(t.First)))
            {
                xTicks.AddMajor(x, XTickFormat?.Invoke(x) ?? label);
            }
        }
        else
        {
            foreach (double x in xs)
            {
                xTicks.AddMajor(x, XTickFormat?.Invoke(x) ?? NiceAxis.FormatValue(x));
            }
        }
        plot.Axes.Bottom.TickGenerator = xTicks;

        int dashed = 0;
        for (int i = 0; i < Series.Count; i++)
        {
            var s = Series[i];
            var pts = s.Points.Where(p => !LogY || p.Y > 0).OrderBy(p => p.X).ToList();
            var line = plot.Add.Scatter(pts.Select(p => p.X).ToArray(), pts.Select(p => Y(p.Y)).ToArray(), Palette[i % Palette.Length]);
            line.LegendText = LegendName(s.Name);
            line.LineWidth = 2;
            // Markers on measurements only: a bound is a formula, not a run.
            line.MarkerSize = s.Dashed ? 0 : 7;
            if (s.Dashed)
            {
                line.LinePattern = DashPatterns[dashed++ % DashPatterns.Length];
            }
        }

        double xPad = Math.Max(xMax - xMin, 1) * 0.03;
        plot.Axes.SetLimits(xMin - xPad, (xMax == xMin ? xMin + 1 : xMax) + xPad, Y(ys[0]), Y(ys[^1]));
        plot.Axes.Bottom.Label.Text = XLabel;
        plot.Axes.Left.Label.Text = YLabel + (LogY ? " (log scale)" : "");
    }
}
