using System.Text.RegularExpressions;
using Camdoop.Monitoring.Metrics;

namespace Camdoop.Simulator.Tests.Monitoring;

/// <summary>
/// The metric names follow Prometheus's conventions (and OpenTelemetry's for the instruments): valid, unique,
/// camdoop_ first, _total on counters only, the unit spelled in the name; each maps back to its status.json counter.
/// </summary>
public sealed partial class MetricCatalogTests
{
    [Fact]
    public void NamesAreValidUniqueAndSayTheirUnitAndKind()
    {
        var all = MetricCatalog.All;
        Assert.Equal(all.Count, all.Select(m => m.Name).Distinct().Count());
        foreach (var metric in all)
        {
            Assert.Matches(Name(), metric.Name);
            Assert.StartsWith("camdoop_", metric.Name, StringComparison.Ordinal);
            Assert.Equal(metric.Kind == MetricKind.Counter, metric.Name.EndsWith("_total", StringComparison.Ordinal));
            string stem = metric.InstrumentName;
            Assert.False(stem.EndsWith("_total", StringComparison.Ordinal), metric.Name);
            switch (metric.Unit)
            {
                case "By":
                    Assert.EndsWith("_bytes", stem, StringComparison.Ordinal);
                    break;
                case "s":
                    Assert.True(stem.EndsWith("_seconds", StringComparison.Ordinal), metric.Name);
                    break;
                default:
                    Assert.False(stem.EndsWith("_bytes", StringComparison.Ordinal) || stem.EndsWith("_seconds", StringComparison.Ordinal), $"{metric.Name} has unit {metric.Unit}");
                    break;
            }
            Assert.False(string.IsNullOrWhiteSpace(metric.Help));
            Assert.DoesNotContain('\n', metric.Help);
            Assert.Equal(metric, MetricCatalog.Find(metric.Name));
        }
    }

    [Theory]
    [InlineData("link", "bytesSent", "camdoop_link_sent_bytes_total", "")]
    [InlineData("link", "busyNs", "camdoop_link_busy_seconds_total", "")]
    [InlineData("node", "framesRejected", "camdoop_node_frames_rejected_total", "")]
    [InlineData("node", "rejectedBadCoordinate", "camdoop_node_frames_rejected_by_reason_total", "bad_coordinate")]
    [InlineData("camdoop", "malformed", "camdoop_shuffle_malformed_total", "")]
    [InlineData("camdoop", "malformedTrailingBytes", "camdoop_shuffle_malformed_by_reason_total", "trailing_bytes")]
    [InlineData("chunkStore", "scrubLastPassEnd", "camdoop_chunk_store_scrub_last_pass_end_timestamp_seconds", "")]
    public void AStatusCounterMapsToItsMetric(string group, string key, string name, string label)
    {
        Assert.True(MetricCatalog.TryMap(group, key, out var metric, out string reason));
        Assert.Equal(name, metric.Name);
        Assert.Equal(label, reason);
    }

    [Fact]
    public void ScalesTurnCountersIntoTheUnitOfTheName()
    {
        var samples = new List<MetricSample>();
        MetricSamples.Add(samples, "link", "busyNs", 2_500_000_000, "+Y");
        MetricSamples.Add(samples, "process", "cpuMs", 1_500);
        MetricSamples.Add(samples, "chunkStore", "scrubLastPassEnd", 1_700_000_000_123);
        MetricSamples.Add(samples, "nowhere", "nothing", 1);
        Assert.Equal([2.5, 1.5, 1_700_000_000.123], samples.Select(s => s.Value));
        Assert.Equal("+Y", samples[0].Label);
        Assert.Equal("port", samples[0].Metric.Label);
    }

    [GeneratedRegex("^[a-z_][a-z0-9_]*$")]
    private static partial Regex Name();
}
