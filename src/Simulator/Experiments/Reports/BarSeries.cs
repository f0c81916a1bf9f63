namespace Camdoop.Experiments.Reports;

/// <summary>
/// One set of bars of a <see cref="SvgBarChart"/>: a name and a value per category (NaN: no bar); a reference series
/// (numbers quoted from elsewhere) is drawn hatched.
/// </summary>
public sealed record BarSeries(string Name, IReadOnlyList<double> Values, bool Reference = false);
