namespace Camdoop.Experiments.Reports;

/// <summary>
/// One set of bars of a <see cref="BarChart"/>: a name and a value per category (NaN: no bar); a reference series
/// (numbers quoted from elsewhere) is drawn hatched. A reference value with a range (<see cref="Ranges"/>, an
/// approximate number) is drawn as a band with whiskers from its low to its high end instead of a bar.
/// </summary>
public sealed record BarSeries(string Name, IReadOnlyList<double> Values, bool Reference = false, IReadOnlyList<PaperValue>? Ranges = null)
{
    /// <summary>The paper's numbers as a reference series: exact ones as hatched bars, approximate ones as ranges.</summary>
    public static BarSeries Paper(string name, IReadOnlyList<PaperValue> values)
    {
        ArgumentNullException.ThrowIfNull(values);
        return new BarSeries(name, [.. values.Select(v => v.Value)], Reference: true, Ranges: values);
    }

    /// <summary>The range drawn for category <paramref name="index"/>, when its value is approximate.</summary>
    public PaperValue? RangeAt(int index) => Ranges is { } r && index < r.Count && r[index].Approximate ? r[index] : null;
}

/// <summary>
/// A number quoted from the paper: exact (stated in its text or a table) or approximate ("about twice", read off a
/// plot), then with the range it stands for.
/// </summary>
public sealed record PaperValue(double Value, double Low, double High)
{
    /// <summary>How far "about" reaches either side of an approximate value: 10 %.</summary>
    public const double AboutTolerance = 0.1;

    public bool Approximate => Low < High;

    public static PaperValue Exact(double value) => new(value, value, value);

    /// <summary>An approximate value: <paramref name="value"/> within <paramref name="relative"/> of it either side.</summary>
    public static PaperValue About(double value, double relative = AboutTolerance) =>
        new(value, value * (1 - relative), value * (1 + relative));
}
