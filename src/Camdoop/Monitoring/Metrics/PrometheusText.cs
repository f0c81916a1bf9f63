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
        var definitions = new Dictionary<string, (int Order, MetricDefinition Metric)>(StringComparer.Ordinal);
        foreach (var metric in extra.Concat(MetricCatalog.All))
        {
            definitions.TryAdd(metric.Name, (definitions.Count, metric));
        }
        var families = new Dictionary<string, List<CubeSample>>(StringComparer.Ordinal);
        // Each server's coordinate is parsed once, not at every comparison.
        var servers = new Dictionary<string, (int X, int Y, int Z, bool Parsed)>(StringComparer.Ordinal);
        foreach (var sample in samples)
        {
            if (!families.TryGetValue(sample.Metric, out var family))
            {
                if (!definitions.ContainsKey(sample.Metric) && !MetricName().IsMatch(sample.Metric))
                {
                    continue;
                }
                families.Add(sample.Metric, family = []);
            }
            family.Add(sample);
            if (!servers.ContainsKey(sample.Server))
            {
                servers.Add(sample.Server, Coordinate.TryParse(sample.Server, out var c) ? (c.X, c.Y, c.Z, true) : (0, 0, 0, false));
            }
        }
        var bySample = Comparer<CubeSample>.Create((a, b) =>
        {
            var (sa, sb) = (servers[a.Server], servers[b.Server]);
            int c = sb.Parsed.CompareTo(sa.Parsed);
            c = c != 0 ? c : sa.X.CompareTo(sb.X);
            c = c != 0 ? c : sa.Y.CompareTo(sb.Y);
            c = c != 0 ? c : sa.Z.CompareTo(sb.Z);
            c = c != 0 ? c : string.CompareOrdinal(a.Server, b.Server);
            return c != 0 ? c : string.CompareOrdinal(a.Label, b.Label);
        });
        var text = new StringBuilder(families.Values.Sum(f => f.Count) * 64);
        foreach (var (name, family) in families
                     .OrderBy(f => definitions.TryGetValue(f.Key, out var d) ? d.Order : int.MaxValue)
                     .ThenBy(f => f.Key, StringComparer.Ordinal))
        {
            var metric = definitions.TryGetValue(name, out var known) ? known.Metric : null;
            if (metric is not null)
            {
                text.Append("# HELP ").Append(name).Append(' ').Append(EscapeHelp(metric.Help)).Append('\n');
            }
            string type = metric?.Kind switch
            {
                MetricKind.Counter => "counter",
                MetricKind.Gauge => "gauge",
                _ => "untyped",
            };
            text.Append("# TYPE ").Append(name).Append(' ').Append(type).Append('\n');
            string labelName = metric?.Label ?? "label";
            family.Sort(bySample);
            foreach (var sample in family)
            {
                text.Append(name);
                bool server = sample.Server.Length > 0;
                bool label = sample.Label.Length > 0;
                if (server || label)
                {
                    text.Append('{');
                    if (server)
                    {
                        AppendLabel(text, "server", sample.Server);
                    }
                    if (label)
                    {
                        AppendLabel(text.Append(server ? "," : ""), labelName, sample.Label);
                    }
                    text.Append('}');
                }
                AppendNumber(text.Append(' '), sample.Value);
                text.Append('\n');
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

    private static void AppendNumber(StringBuilder text, double value)
    {
        if (double.IsFinite(value))
        {
            text.Append(CultureInfo.InvariantCulture, $"{value:R}");
        }
        else
        {
            text.Append(Number(value));
        }
    }

    private static void AppendLabel(StringBuilder text, string name, string value)
    {
        text.Append(name).Append("=\"");
        if (value.AsSpan().IndexOfAny('\\', '"', '\n') < 0)
        {
            text.Append(value);
        }
        else
        {
            foreach (char c in value)
            {
                text.Append(c switch
                {
                    '\\' => "\\\\",
                    '"' => "\\\"",
                    '\n' => "\\n",
                    _ => c.ToString(),
                });
            }
        }
        text.Append('"');
    }

    private static string EscapeHelp(string help) => help.Replace("\\", "\\\\", StringComparison.Ordinal).Replace("\n", "\\n", StringComparison.Ordinal);

    [GeneratedRegex("^[a-zA-Z_:][a-zA-Z0-9_:]*$")]
    private static partial Regex MetricName();
}
