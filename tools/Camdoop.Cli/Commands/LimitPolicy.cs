using System.Globalization;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>
/// `camdoop limit ... --when QUERY --above X`: a threshold policy over a monitoring query's rounds. A round triggers
/// it when the largest number in its last column exceeds the threshold (rows whose last value is not a number are
/// passed over), so a query ends with the measure to watch: `select port, sum(bytes_sent) ... group by port`.
/// </summary>
public sealed class LimitPolicy(double above)
{
    public double Above { get; } = above;

    /// <summary>Whether <paramref name="round"/> triggers the policy; <paramref name="value"/> is its largest value (NaN: none).</summary>
    public bool Triggers(QueryPart round, out double value)
    {
        ArgumentNullException.ThrowIfNull(round);
        value = double.NaN;
        if (round.Columns.Count == 0)
        {
            return false;
        }
        int last = round.Columns.Count - 1;
        foreach (var row in round.Rows)
        {
            if (row.Count > last && double.TryParse(row[last], NumberStyles.Float, CultureInfo.InvariantCulture, out double v)
                && (double.IsNaN(value) || v > value))
            {
                value = v;
            }
        }
        return !double.IsNaN(value) && value > Above;
    }
}
