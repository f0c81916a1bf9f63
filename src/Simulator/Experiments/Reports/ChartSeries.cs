namespace Camdoop.Experiments.Reports;

/// <summary>One line of a chart: a name, points (x, y) and whether to draw it dashed (bounds) or solid (measurements).</summary>
public sealed record ChartSeries(string Name, IReadOnlyList<(double X, double Y)> Points, bool Dashed = false);
