using System.Globalization;

namespace Camdoop.Experiments.Reports;

/// <summary>
/// Round axis ticks ("nice numbers"): linear axes step by 1, 2, 2.5 or 5 times a power of ten and their labels carry
/// no more digits than the step needs; log axes tick at powers of ten.
/// </summary>
public static class NiceAxis
{
    private static readonly double[] Mantissas = [1, 2, 2.5, 5, 10];

    /// <summary>The smallest step of 1, 2, 2.5 or 5 x 10^k that is at least <paramref name="raw"/>.</summary>
    public static double Step(double raw)
    {
        if (!(raw > 0) || double.IsInfinity(raw))
        {
            return 1;
        }
        double power = Math.Pow(10, Math.Floor(Math.Log10(raw)));
        foreach (double m in Mantissas)
        {
            // A little slack: 0.1 / 1 must not round to 0.10000000000000002 and step past 1.
            if (m * power >= raw * (1 - 1e-9))
            {
                return m * power;
            }
        }
        return 10 * power;
    }

    /// <summary>
    /// Ticks covering [<paramref name="lo"/>, <paramref name="hi"/>] with at most about <paramref name="maxTicks"/>
    /// of them: the first at or below lo, the last at or above hi, evenly a nice step apart.
    /// </summary>
    public static IReadOnlyList<double> Ticks(double lo, double hi, int maxTicks = 6)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxTicks, 2);
        if (hi < lo)
        {
            (lo, hi) = (hi, lo);
        }
        if (hi == lo)
        {
            hi = lo == 0 ? 1 : lo + Math.Abs(lo);
        }
        double step = Step((hi - lo) / (maxTicks - 1));
        long first = (long)Math.Floor((lo / step) + 1e-9), last = (long)Math.Ceiling((hi / step) - 1e-9);
        int decimals = Decimals(step);
        var ticks = new List<double>();
        for (long k = first; k <= last; k++)
        {
            ticks.Add(Math.Round(k * step, decimals));
        }
        return ticks;
    }

    /// <summary>Decimal places a step needs: 0.25 two, 0.5 one, 20 none.</summary>
    public static int Decimals(double step)
    {
        for (int d = 0; d < 15; d++)
        {
            double scaled = step * Math.Pow(10, d);
            if (Math.Round(scaled) >= 1 && Math.Abs(scaled - Math.Round(scaled)) < 1e-6 * scaled)
            {
                return d;
            }
        }
        return 15;
    }

    /// <summary>
    /// A tick's label at the step's precision, with thousands separated: 0.30000000000000004 at step 0.1 reads "0.3",
    /// and 12500000 reads "12,500,000".
    /// </summary>
    public static string Format(double value, double step)
    {
        int decimals = Decimals(step);
        double rounded = Math.Round(value, decimals);
        return (rounded == 0 ? 0 : rounded).ToString("N" + decimals.ToString(CultureInfo.InvariantCulture), CultureInfo.InvariantCulture);
    }

    /// <summary>Labels for linear ticks as <see cref="Ticks"/> returns them (their step from the first two).</summary>
    public static IReadOnlyList<string> Labels(IReadOnlyList<double> ticks)
    {
        ArgumentNullException.ThrowIfNull(ticks);
        double step = ticks.Count > 1 ? ticks[1] - ticks[0] : 1;
        return [.. ticks.Select(t => Format(t, Step(step * (1 - 1e-9))))];
    }

    /// <summary>Powers of ten from the one at or below <paramref name="lo"/> to the one at or above <paramref name="hi"/> (both &gt; 0).</summary>
    public static IReadOnlyList<double> LogTicks(double lo, double hi)
    {
        if (!(lo > 0) || !(hi > 0))
        {
            throw new ArgumentOutOfRangeException(nameof(lo), "a log axis needs positive bounds");
        }
        int a = (int)Math.Floor(Math.Log10(Math.Min(lo, hi)) + 1e-9), b = (int)Math.Ceiling(Math.Log10(Math.Max(lo, hi)) - 1e-9);
        if (b <= a)
        {
            b = a + 1;
        }
        return [.. Enumerable.Range(a, b - a + 1).Select(Pow10)];
    }

    /// <summary>A power of ten's label: plain from 0.0001 to 10,000 ("0.01", "1,000"), else "1e-5", "1e6".</summary>
    public static string FormatPowerOfTen(double value)
    {
        int k = (int)Math.Round(Math.Log10(value));
        return k switch
        {
            >= 0 and <= 4 => Pow10(k).ToString("N0", CultureInfo.InvariantCulture),
            < 0 and >= -4 => Pow10(k).ToString("F" + (-k).ToString(CultureInfo.InvariantCulture), CultureInfo.InvariantCulture),
            _ => "1e" + k.ToString(CultureInfo.InvariantCulture),
        };
    }

    /// <summary>
    /// A data value's label (an x value of a sweep, a bar's height): at most <paramref name="significant"/>
    /// significant digits, no trailing zeros, no exponent between 0.0001 and 10^7.
    /// </summary>
    public static string FormatValue(double value, int significant = 3)
    {
        if (value == 0 || double.IsNaN(value) || double.IsInfinity(value))
        {
            return value == 0 ? "0" : value.ToString(CultureInfo.InvariantCulture);
        }
        double abs = Math.Abs(value);
        if (abs < 1e-4 || abs >= 1e7)
        {
            return value.ToString("0.##e0", CultureInfo.InvariantCulture);
        }
        int magnitude = (int)Math.Floor(Math.Log10(abs));
        int decimals = Math.Max(0, significant - 1 - magnitude);
        double rounded = Math.Round(value, decimals);
        return rounded.ToString("0." + new string('#', Math.Max(decimals, 1)), CultureInfo.InvariantCulture);
    }

    private static double Pow10(int k) => double.Parse("1e" + k.ToString(CultureInfo.InvariantCulture), CultureInfo.InvariantCulture);
}
