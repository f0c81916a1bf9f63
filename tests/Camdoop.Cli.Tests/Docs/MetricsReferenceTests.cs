using System.Text.Json;
using System.Text.RegularExpressions;
using Camdoop.FrontEnd;
using Camdoop.Monitoring.Metrics;

namespace Camdoop.Cli.Tests.Docs;

/// <summary>
/// docs/monitoring.md and the Grafana dashboard against the metrics themselves: the reference lists every metric
/// with its type and label and no other, and every expression of docs/grafana/camdoop.json names metrics that exist.
/// </summary>
public sealed partial class MetricsReferenceTests
{
    [Fact]
    public void TheReferenceListsEveryMetricWithItsTypeAndLabel()
    {
        var rows = Row().Matches(Read("docs", "monitoring.md")).ToDictionary(m => m.Groups["name"].Value, m => (Type: m.Groups["type"].Value, Label: m.Groups["label"].Value));
        foreach (var metric in MetricCatalog.All)
        {
            Assert.True(rows.TryGetValue(metric.Name, out var row), $"docs/monitoring.md does not list {metric.Name}");
            Assert.Equal(metric.Kind == MetricKind.Counter ? "counter" : "gauge", row.Type);
            Assert.Equal(metric.Label ?? "–", row.Label);
        }
        Assert.Empty(rows.Keys.Except(MetricCatalog.All.Select(m => m.Name)));
    }

    [Fact]
    public void TheDashboardNamesOnlyMetricsThatExist()
    {
        using var dashboard = JsonDocument.Parse(Read("docs", "grafana", "camdoop.json"));
        var known = MetricCatalog.All.Select(m => m.Name).Concat(CubeMetrics.ScrapeMetrics.Select(m => m.Name)).ToHashSet(StringComparer.Ordinal);
        var used = new HashSet<string>(StringComparer.Ordinal);
        foreach (var panel in dashboard.RootElement.GetProperty("panels").EnumerateArray())
        {
            if (!panel.TryGetProperty("targets", out var targets))
            {
                continue;
            }
            foreach (var target in targets.EnumerateArray())
            {
                string expression = target.GetProperty("expr").GetString()!;
                Assert.Equal(expression.Count(c => c == '('), expression.Count(c => c == ')'));
                used.UnionWith(MetricName().Matches(expression).Select(m => m.Value));
            }
        }
        Assert.True(used.Count > 20, $"only {used.Count} metrics on the dashboard");
        Assert.Empty(used.Except(known));
    }

    private static string Read(params string[] path)
    {
        var directory = new DirectoryInfo(AppContext.BaseDirectory);
        while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "Camdoop.sln")))
        {
            directory = directory.Parent;
        }
        Assert.True(directory is not null, $"no directory above {AppContext.BaseDirectory} holds Camdoop.sln");
        return File.ReadAllText(Path.Combine([directory!.FullName, .. path]));
    }

    // "| `camdoop_link_up` | gauge | port | ..." in the reference's table.
    [GeneratedRegex(@"^\| `(?<name>camdoop_[a-z_]+)` \| (?<type>counter|gauge) \| (?<label>[a-z]+|–) \|", RegexOptions.Multiline)]
    private static partial Regex Row();

    [GeneratedRegex(@"\bcamdoop_[a-z_]+\b")]
    private static partial Regex MetricName();
}
