using System.Diagnostics;
using System.Net;
using System.Net.Http.Headers;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json.Nodes;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.Hosting;
using Camdoop.Monitoring.Metrics;
using Camdoop.Tests.Shared;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.Metrics;

/// <summary>
/// The cube's metrics on a 3x3x3 testbed: /metrics of server 0,0,0's web view, scraped with a token from
/// `camdoop metrics --token` as Prometheus would (HTTPS under the cluster CA, Authorization: Bearer), is an exposition
/// a strict reader accepts with all 27 servers' series, each between what that server's status.json said before and
/// after the scrape; `camdoop metrics` prints the same families; without a token or session, with a wrong one or a
/// revoked one, /metrics is refused. And dotnet-counters, installed by the test, reads a node process's meter live.
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed class MetricsTestbedTests(MetricsCube cube, ITestOutputHelper output) : IClassFixture<MetricsCube>
{
    [RootFact]
    public async Task MetricsHasEveryServersSeriesBetweenTheirStatusBeforeAndAfter()
    {
        var made = cube.Cli("metrics", "--token", "--json");
        Assert.True(made.ExitCode == 0, made.ToString());
        var json = JsonNode.Parse(made.Stdout)!;
        string url = json["url"]!.GetValue<string>();
        Assert.Equal($"https://{cube.Server("0,0,0").Address}:7080/metrics", url);
        using var http = Client();

        var before = cube.State.Servers.ToDictionary(s => s.Coordinate, cube.NodeStatusOf);
        var asked = DateTime.UtcNow;
        var clock = Stopwatch.StartNew();
        using var request = new HttpRequestMessage(HttpMethod.Get, url);
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", json["token"]!.GetValue<string>());
        var response = await http.SendAsync(request);
        string text = await response.Content.ReadAsStringAsync();
        clock.Stop();
        Assert.True(response.StatusCode == HttpStatusCode.OK, text);
        Assert.Equal(PrometheusText.ContentType, response.Content.Headers.ContentType!.ToString());
        var after = StatusAfter(DateTime.UtcNow);

        var families = PrometheusExposition.Parse(text).ToDictionary(f => f.Name);
        output.WriteLine($"/metrics: {text.Length:N0} bytes, {families.Count} families, {families.Values.Sum(f => f.Samples.Count):N0} series in {clock.Elapsed.TotalMilliseconds:0} ms; merge {families["camdoop_scrape_merge_seconds"].Samples.Single().Value * 1000:0} ms");
        Assert.Equal(27, families["camdoop_scrape_servers"].Samples.Single().Value);
        Assert.Equal(27, families["camdoop_scrape_cube_servers"].Samples.Single().Value);
        var servers = cube.State.Servers.Select(s => s.Coordinate).Order().ToList();
        foreach (var family in families.Values.Where(f => !f.Name.StartsWith("camdoop_scrape_", StringComparison.Ordinal)))
        {
            var metric = MetricCatalog.Find(family.Name);
            Assert.True(metric is not null, $"{family.Name} is not in the catalog");
            Assert.Equal(metric.Kind == MetricKind.Counter ? "counter" : "gauge", family.Type);
            // Every server runs every service, a front-end and a web view: every metric has all 27.
            Assert.Equal(servers, family.Samples.Select(s => s.Label("server")).Distinct().Order());
        }
        foreach (var (name, seriesPerServer) in new[] { ("camdoop_link_frames_sent_total", 6), ("camdoop_node_frames_rejected_by_reason_total", 9), ("camdoop_links_up", 1) })
        {
            Assert.Equal(27 * seriesPerServer, families[name].Samples.Count);
        }

        // Each value lies between the server's own status before and after the scrape (counters only grow; these
        // gauges stand still with nothing running).
        double Status(NodeStatus status, string metric, string label)
        {
            var samples = NodeStatusMetrics.Read(status);
            return samples.Single(s => s.Metric.Name == metric && s.Label == label).Value;
        }
        foreach (var family in families.Values.Where(f => f.Name is "camdoop_link_frames_sent_total" or "camdoop_link_received_bytes_total" or "camdoop_node_frames_forwarded_total"
                     or "camdoop_routing_delivered_total" or "camdoop_shuffle_data_sent_bytes_total" or "camdoop_chunk_store_replicas" or "camdoop_chunk_store_stored_bytes"))
        {
            foreach (var sample in family.Samples)
            {
                string server = sample.Label("server");
                string label = sample.Labels.Where(l => l.Key != "server").Select(l => l.Value).SingleOrDefault() ?? "";
                Assert.InRange(sample.Value, Status(before[server], family.Name, label), Status(after[server], family.Name, label));
            }
        }
        Assert.Equal(cube.Sum("chunkStore", "replicasHeld"), families["camdoop_chunk_store_replicas"].Samples.Sum(s => s.Value));
        Assert.True(families["camdoop_shuffle_data_sent_bytes_total"].Samples.Sum(s => s.Value) > 0, "the word count's shuffle sent nothing");
        Assert.All(families["camdoop_link_up"].Samples, s => Assert.Equal(1, s.Value));

        // The same families through the front-end connection.
        var printed = cube.Cli("metrics");
        Assert.True(printed.ExitCode == 0, printed.ToString());
        var viaCli = PrometheusExposition.Parse(printed.Stdout);
        Assert.Equal(families.Keys.Order(), viaCli.Select(f => f.Name).Order());
        Assert.Equal(27, viaCli.Single(f => f.Name == "camdoop_scrape_servers").Samples.Single().Value);

        // Every counter of a front-end server's status.json is one of the metrics.
        foreach (var (group, counters) in after["0,0,0"].Counters)
        {
            Assert.All(counters.Keys, key => Assert.True(MetricCatalog.TryMap(group, key, out _, out _), $"status.json counter {group}.{key} is no metric"));
        }
    }

    [RootFact]
    public async Task MetricsIsRefusedWithoutATokenOrWithARevokedOne()
    {
        string url = $"https://{cube.Server("0,0,0").Address}:7080/metrics";
        using var http = Client();
        long refused = WebCounter("unauthorized");
        Assert.Equal(HttpStatusCode.Unauthorized, (await http.GetAsync(url)).StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync(http, url, new string('a', 64))).StatusCode);

        var made = cube.Cli("metrics", "--token", "--days", "1", "--json");
        Assert.True(made.ExitCode == 0, made.ToString());
        string token = JsonNode.Parse(made.Stdout)!["token"]!.GetValue<string>();
        Assert.Equal(HttpStatusCode.OK, (await GetAsync(http, url, token)).StatusCode);
        // A token is server 0,0,0's: another server's web view does not know it.
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync(http, $"https://{cube.Server("1,0,0").Address}:7080/metrics", token)).StatusCode);

        var revoked = cube.Cli("metrics", "--revoke", "--json");
        Assert.True(revoked.ExitCode == 0, revoked.ToString());
        Assert.True(JsonNode.Parse(revoked.Stdout)!["tokens"]!.GetValue<long>() >= 1, revoked.Stdout);
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync(http, url, token)).StatusCode);
        EmulatedCube.WaitUntil(() => WebCounter("unauthorized") >= refused + 3, "the refusals were not counted in status.json");

        // A browser's session opens it too.
        var web = CliRunner.Run("web", "--prefix", MetricsCube.Prefix, "--json");
        Assert.True(web.ExitCode == 0, web.ToString());
        var login = await http.GetAsync(JsonNode.Parse(web.Stdout)!["loginUrl"]!.GetValue<string>());
        using var withSession = new HttpRequestMessage(HttpMethod.Get, url);
        withSession.Headers.Add("Cookie", login.Headers.GetValues("Set-Cookie").Single().Split(';')[0]);
        Assert.Equal(HttpStatusCode.OK, (await http.SendAsync(withSession)).StatusCode);
    }

    [RootFact]
    public void DotnetCountersReadsANodeProcessLive()
    {
        var server = cube.Server("1,2,0");
        var collected = DotnetCounters.Collect(server.Pid, NodeMeter.MeterName, seconds: 3);
        output.WriteLine($"dotnet-counters: {collected.Count} values of {collected.Select(c => c.Instrument).Distinct().Count()} instruments from pid {server.Pid}");
        Assert.All(collected, c => Assert.Equal("1-2-0", c.Tags["server"]));
        Assert.Equal(["+X", "+Y", "+Z", "-X", "-Y", "-Z"], collected.Where(c => c.Instrument == "camdoop_link_up").Select(c => c.Tags["port"]).Distinct().Order(StringComparer.Ordinal));
        Assert.All(collected.Where(c => c.Instrument is "camdoop_link_up"), c => Assert.Equal(1, c.Value));
        Assert.All(collected.Where(c => c.Instrument is "camdoop_links_up"), c => Assert.Equal(6, c.Value));
        // Beacons flow on every link: each port sends bytes every second.
        Assert.Contains(collected, c => c.Instrument == "camdoop_link_sent_bytes" && c.Kind == "Rate" && c.Value > 0);
        Assert.Equal(cube.NodeStatusOf(server).Counters["chunkStore"]["replicasHeld"], collected.Last(c => c.Instrument == "camdoop_chunk_store_replicas").Value);
    }

    /// <summary>Every server's status written after <paramref name="asked"/>.</summary>
    private Dictionary<string, NodeStatus> StatusAfter(DateTime asked)
    {
        var after = new Dictionary<string, NodeStatus>();
        EmulatedCube.WaitUntil(() =>
        {
            foreach (var server in cube.State.Servers)
            {
                if (NodeStatus.TryRead(server.StatusPath) is { } status && status.UpdatedUtc > asked)
                {
                    after[server.Coordinate] = status;
                }
            }
            return after.Count == cube.State.Servers.Count;
        }, "status files are not being rewritten", seconds: 30);
        return after;
    }

    private long WebCounter(string name) => cube.NodeStatusOf("0,0,0").Counters.GetValueOrDefault("web")?.GetValueOrDefault(name) ?? 0;

    /// <summary>An HTTPS client that trusts the testbed's cluster CA only, as a Prometheus configured with its ca.crt would.</summary>
    private HttpClient Client()
    {
        var authority = X509CertificateLoader.LoadCertificateFromFile(Path.Combine(cube.State.ClientCerts!, "ca.crt"));
        return CaTrustingHttpClient.Create(authority, TimeSpan.FromSeconds(60));
    }

    private static async Task<HttpResponseMessage> GetAsync(HttpClient http, string url, string token)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, url);
        request.Headers.Authorization = new AuthenticationHeaderValue("Bearer", token);
        return await http.SendAsync(request);
    }
}
