using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;
using Camdoop.Runtime.Topology;

namespace Camdoop.Monitoring.Metrics;

/// <summary>
/// The Prometheus text exposition format, version 0.0.4, of the whole cube's series: one family per metric (its
/// HELP and TYPE lines, then its samples), each sample labelled server="x,y,z" and with its own label (port,
/// reason) when it has one. Families come in <see cref="MetricCatalog"/>'s order, samples by server and label. A
/// metric the catalog does not know (a server newer than this front-end) is exposed untyped with its label as
/// "label"; a name that is no valid metric name is left out, so that what a server reports can never make the
/// exposition unreadable.
/// </summary>
public static partial class PrometheusText
{
    /// <summary>The exposition's content type.</summary>
    public const string ContentType = "text/plain; version=0.0.4; charset=utf-8";

    /// <summary>Formats <paramref name="samples"/>; <paramref name="extra"/> defines metrics outside the catalog (the front-end's own), exposed first.</summary>
    public static string Format(IEnumerable<CubeSample> samples, IReadOnlyList<MetricDefinition>? extra = null)
    {
        ArgumentNullException.ThrowIfNull(samples);
        extra ??= [];
        var order = new Dictionary<string, int>(StringComparer.Ordinal);
        foreach (var metric in extra.Concat(MetricCatalog.All))
        {
            order.TryAdd(metric.Name, order.Count);
        }
        var families = samples
            .Where(s => MetricName().IsMatch(s.Metric))
            .GroupBy(s => s.Metric, StringComparer.Ordinal)
            .OrderBy(f => order.GetValueOrDefault(f.Key, int.MaxValue))
            .ThenBy(f => f.Key, StringComparer.Ordinal);
        var text = new StringBuilder();
        foreach (var family in families)
        {
            var metric = extra.FirstOrDefault(m => m.Name == family.Key) ?? MetricCatalog.Find(family.Key);
            if (metric is not null)
            {
                text.Append("# HELP ").Append(family.Key).Append(' ').Append(EscapeHelp(metric.Help)).Append('\n');
            }
            string type = metric?.Kind switch
            {
                MetricKind.Counter => "counter",
                MetricKind.Gauge => "gauge",
                _ => "untyped",
            };
            text.Append("# TYPE ").Append(family.Key).Append(' ').Append(type).Append('\n');
            string labelName = metric?.Label ?? "label";
            foreach (var sample in family.OrderBy(s => s.Server, ServerOrder.Instance).ThenBy(s => s.Label, StringComparer.Ordinal))
            {
                text.Append(family.Key);
                var labels = new List<(string Name, string Value)>(2);
                if (sample.Server.Length > 0)
                {
                    labels.Add(("server", sample.Server));
                }
                if (sample.Label.Length > 0)
                {
                    labels.Add((labelName, sample.Label));
                }
                if (labels.Count > 0)
                {
                    text.Append('{');
                    for (int i = 0; i < labels.Count; i++)
                    {
                        text.Append(i == 0 ? "" : ",").Append(labels[i].Name).Append("=\"").Append(EscapeLabel(labels[i].Value)).Append('"');
                    }
                    text.Append('}');
                }
                text.Append(' ').Append(Number(sample.Value)).Append('\n');
            }
        }
        return text.ToString();
    }

    /// <summary>A sample value as Prometheus reads it (Go's float syntax).</summary>
    public static string Number(double value) => value switch
    {
        double.NaN => "NaN",
        double.PositiveInfinity => "+Inf",
        double.NegativeInfinity => "-Inf",
        _ => value.ToString("R", CultureInfo.InvariantCulture),
    };

    private static string EscapeLabel(string value) => value.Replace("\\", "\\\\", StringComparison.Ordinal)
        .Replace("\"", "\\\"", StringComparison.Ordinal)
        .Replace("\n", "\\n", StringComparison.Ordinal);

    private static string EscapeHelp(string help) => help.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("\n", "\\n", StringComparison.Ordinal);

    [GeneratedRegex("^[a-zA-Z_:][a-zA-Z0-9_:]*$")]
    private static partial Regex MetricName();

    /// <summary>Servers by coordinate (x, then y, then z), so that 10,0,0 comes after 9,0,0; anything else after them, in text order.</summary>
    private sealed class ServerOrder : IComparer<string>
    {
        public static readonly ServerOrder Instance = new();

        public int Compare(string? a, string? b)
        {
            bool isA = Coordinate.TryParse(a ?? "", out var ca);
            bool isB = Coordinate.TryParse(b ?? "", out var cb);
            if (isA && isB)
            {
                int c = ca.X.CompareTo(cb.X);
                c = c != 0 ? c : ca.Y.CompareTo(cb.Y);
                return c != 0 ? c : ca.Z.CompareTo(cb.Z);
            }
            return isA != isB ? (isA ? -1 : 1) : string.CompareOrdinal(a, b);
        }
    }
}
