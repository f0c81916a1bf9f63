using Camdoop.Monitoring.Metrics;
using Camdoop.Tests.Shared;

namespace Camdoop.Simulator.Tests.Monitoring;

/// <summary>
/// The exposition the front-end serves at /metrics, on samples made up to reach its corners: families in the
/// catalog's order with their HELP and TYPE, servers in coordinate order, escaped label values, values in Go's float
/// syntax, a metric the catalog does not know exposed untyped, and a name that is no metric name left out. A strict
/// reader of the format checks the text.
/// </summary>
public sealed class PrometheusTextTests
{
    [Fact]
    public void FamiliesComeInTheCatalogsOrderWithHelpTypeAndEveryLabel()
    {
        CubeSample[] samples =
        [
            new("10,0,0", "camdoop_link_frames_sent_total", "+X", 3),
            new("2,0,0", "camdoop_link_frames_sent_total", "-X", 4),
            new("2,0,0", "camdoop_link_frames_sent_total", "+X", 5),
            new("0,0,0", "camdoop_links_up", "", 6),
            new("", "camdoop_scrape_servers", "", 27),
        ];
        var scrape = new MetricDefinition("camdoop_scrape_servers", MetricKind.Gauge, "1", "Servers that answered");
        string text = PrometheusText.Format(samples, [scrape]);

        Assert.Equal(
            """
            # HELP camdoop_scrape_servers Servers that answered
            # TYPE camdoop_scrape_servers gauge
            camdoop_scrape_servers 27
            # HELP camdoop_links_up Links of the server that are up: carrier, and the neighbour heard within the liveness deadline
            # TYPE camdoop_links_up gauge
            camdoop_links_up{server="0,0,0"} 6
            # HELP camdoop_link_frames_sent_total Frames the port handed to its link
            # TYPE camdoop_link_frames_sent_total counter
            camdoop_link_frames_sent_total{server="2,0,0",port="+X"} 5
            camdoop_link_frames_sent_total{server="2,0,0",port="-X"} 4
            camdoop_link_frames_sent_total{server="10,0,0",port="+X"} 3

            """.Replace("\r\n", "\n", StringComparison.Ordinal),
            text);
        var families = PrometheusExposition.Parse(text);
        Assert.Equal(["camdoop_scrape_servers", "camdoop_links_up", "camdoop_link_frames_sent_total"], families.Select(f => f.Name));
    }

    [Fact]
    public void LabelValuesAreEscapedAndValuesAreGoFloats()
    {
        CubeSample[] samples =
        [
            new("0,0,0", "camdoop_node_frames_rejected_by_reason_total", "a \"quoted\\ reason\nover two lines", 1),
            new("0,0,0", "camdoop_link_busy_seconds_total", "+X", 1.5e-9),
            new("0,0,0", "camdoop_link_sent_bytes_total", "+X", 123_456_789_012_345_678),
            new("0,0,0", "camdoop_process_working_set_bytes", "", double.NaN),
            new("0,0,0", "camdoop_process_disk_free_bytes", "", double.PositiveInfinity),
        ];
        string text = PrometheusText.Format(samples);

        Assert.Contains("camdoop_node_frames_rejected_by_reason_total{server=\"0,0,0\",reason=\"a \\\"quoted\\\\ reason\\nover two lines\"} 1\n", text, StringComparison.Ordinal);
        var values = PrometheusExposition.Parse(text).SelectMany(f => f.Samples).ToDictionary(s => s.Name);
        Assert.Equal("a \"quoted\\ reason\nover two lines", values["camdoop_node_frames_rejected_by_reason_total"].Label("reason"));
        Assert.Equal(1.5e-9, values["camdoop_link_busy_seconds_total"].Value);
        Assert.Equal(123_456_789_012_345_678d, values["camdoop_link_sent_bytes_total"].Value);
        Assert.True(double.IsNaN(values["camdoop_process_working_set_bytes"].Value));
        Assert.Equal(double.PositiveInfinity, values["camdoop_process_disk_free_bytes"].Value);
    }

    [Fact]
    public void AnUnknownMetricIsUntypedAndAnInvalidNameIsLeftOut()
    {
        CubeSample[] samples =
        [
            new("1,0,0", "camdoop_from_a_newer_server_total", "x", 7),
            new("1,0,0", "not a metric{evil=\"1\"} 99\n# TYPE", "", 8),
            new("1,0,0", "camdoop_links_up", "", 6),
        ];
        string text = PrometheusText.Format(samples);

        var families = PrometheusExposition.Parse(text);
        Assert.Equal(["camdoop_links_up", "camdoop_from_a_newer_server_total"], families.Select(f => f.Name));
        var unknown = families[1];
        Assert.Equal("untyped", unknown.Type);
        Assert.Null(unknown.Help);
        Assert.Equal("x", unknown.Samples.Single().Label("label"));
        Assert.DoesNotContain("evil", text, StringComparison.Ordinal);
    }

    [Fact]
    public void TheStrictReaderRefusesWhatPrometheusWould()
    {
        string[] bad =
        [
            "a 1",
            "a{b=\"1\"} 1\nc 2\na{b=\"2\"} 3\n",
            "a 1\na 2\n",
            "a{__b=\"1\"} 1\n",
            "a{b=\"\\t\"} 1\n",
            "a 0x10\n",
            "a 1\n# TYPE a counter\n",
            "# TYPE a counter\n# TYPE a gauge\n",
            "# TYPE a histogramme\n",
            "1a 1\n",
            "a{b=1} 1\n",
        ];
        Assert.All(bad, text => Assert.Throws<FormatException>(() => PrometheusExposition.Parse(text)));
        Assert.Single(PrometheusExposition.Parse("# a comment\n# HELP a x\\\\y\\n\n# TYPE a counter\na{b=\"1\",} 1e3 1700000000000\n"));
    }
}
