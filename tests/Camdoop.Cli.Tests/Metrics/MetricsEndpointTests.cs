using System.Net;
using System.Net.Http.Headers;
using System.Text.Json.Nodes;
using Camdoop.Cli.Tests.Support;
using Camdoop.FrontEnd.Wire;
using Camdoop.Tests.Shared;

namespace Camdoop.Cli.Tests.Metrics;

/// <summary>
/// /metrics on a real node's web view over HTTPS, and `camdoop metrics` through its front-end: refused without a
/// session or a scrape token (401 with a Bearer challenge, counted), served to either as a Prometheus exposition a
/// strict reader accepts, with the node's series labelled by its server; a token made by `camdoop metrics --token`
/// works until `camdoop metrics --revoke`. One server of a 2x2x2 torus with no links answers alone: the CLI prints the
/// exposition and says that 7 servers are missing.
/// </summary>
public sealed class MetricsEndpointTests : IDisposable
{
    private readonly OneNode _one = new();
    private readonly HttpClient _web;

    public MetricsEndpointTests()
    {
        _web = _one.Web();
    }

    public void Dispose()
    {
        _web.Dispose();
        _one.Dispose();
    }

    [Fact]
    public async Task MetricsIsRefusedWithoutASessionOrAToken()
    {
        long before = _one.Node.Web!.Unauthorized;
        var bare = await _web.GetAsync("/metrics");
        Assert.Equal(HttpStatusCode.Unauthorized, bare.StatusCode);
        Assert.Equal("Bearer", bare.Headers.WwwAuthenticate.Single().Scheme);
        Assert.DoesNotContain("camdoop_", await bare.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/metrics", new AuthenticationHeaderValue("Bearer", new string('0', 64)))).StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/metrics", new AuthenticationHeaderValue("Bearer", "not-a-token"))).StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/metrics", new AuthenticationHeaderValue("Basic", "YWRtaW46YWRtaW4="))).StatusCode);
        using (var cookie = new HttpRequestMessage(HttpMethod.Get, "/metrics"))
        {
            cookie.Headers.Add("Cookie", "camdoop_session=" + new string('f', 64));
            Assert.Equal(HttpStatusCode.Unauthorized, (await _web.SendAsync(cookie)).StatusCode);
        }
        // A token opens /metrics only, not the page.
        string token;
        using (var client = _one.Connect())
        {
            token = client.Call(new MetricsTokenRequest { Days = 1 }).Token;
        }
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/api/state", new AuthenticationHeaderValue("Bearer", token))).StatusCode);
        Assert.Equal(before + 6, _one.Node.Web.Unauthorized);
        Assert.Equal(0, _one.Node.Web.Scrapes);
        Assert.Equal(HttpStatusCode.MethodNotAllowed, (await _web.PostAsync("/metrics", new StringContent(""))).StatusCode);
    }

    [Fact]
    public async Task ATokenOrASessionGetsTheExpositionUntilTheTokensAreRevoked()
    {
        _one.StoreChunk("scraped", 0, new byte[4_321]);
        string token;
        using (var client = _one.Connect())
        {
            var issued = client.Call(new MetricsTokenRequest { Days = 2 });
            token = issued.Token;
            Assert.Matches("^[0-9a-f]{64}$", token);
            Assert.Equal(_one.Node.Web!.Server!.EndPoint.Port, issued.Port);
            Assert.InRange(issued.ExpiresUnixSeconds - DateTimeOffset.UtcNow.ToUnixTimeSeconds(), (2 * 86_400) - 60, 2 * 86_400);
        }
        var response = await GetAsync("/metrics", new AuthenticationHeaderValue("Bearer", token));
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("text/plain; version=0.0.4; charset=utf-8", response.Content.Headers.ContentType!.ToString());
        var families = PrometheusExposition.Parse(await response.Content.ReadAsStringAsync()).ToDictionary(f => f.Name);
        Assert.Equal(1, families["camdoop_scrape_servers"].Samples.Single().Value);
        Assert.Equal(8, families["camdoop_scrape_cube_servers"].Samples.Single().Value);
        Assert.All(families.Values.Where(f => !f.Name.StartsWith("camdoop_scrape_", StringComparison.Ordinal)).SelectMany(f => f.Samples),
            s => Assert.Equal("0,0,0", s.Label("server")));
        Assert.Equal(4_321, families["camdoop_chunk_store_stored_bytes"].Samples.Single().Value);
        Assert.Equal(6, families["camdoop_link_frames_sent_total"].Samples.Count);
        Assert.Contains(families["camdoop_frontend_requests_total"].Samples, s => s.Value >= 1);
        Assert.Equal(1, _one.Node.Web!.Scrapes);

        // A browser's session opens it as well.
        var login = await _web.GetAsync("/login?code=" + _one.Node.Web.Sessions.IssueLoginCode());
        string session = login.Headers.GetValues("Set-Cookie").Single().Split(';')[0];
        using (var withSession = new HttpRequestMessage(HttpMethod.Get, "/metrics"))
        {
            withSession.Headers.Add("Cookie", session);
            Assert.Equal(HttpStatusCode.OK, (await _web.SendAsync(withSession)).StatusCode);
        }

        using (var client = _one.Connect())
        {
            Assert.Equal(1, client.Call(new MetricsRevokeRequest()).Tokens);
        }
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/metrics", new AuthenticationHeaderValue("Bearer", token))).StatusCode);
        // Revoking the tokens leaves the sessions be.
        using var stillLive = new HttpRequestMessage(HttpMethod.Get, "/metrics");
        stillLive.Headers.Add("Cookie", session);
        Assert.Equal(HttpStatusCode.OK, (await _web.SendAsync(stillLive)).StatusCode);
    }

    [Fact]
    public async Task TheCommandPrintsTheExpositionAndMakesAndRevokesTokens()
    {
        var printed = CliRunner.Run("metrics", "--frontend", _one.FrontEnd, "--certs", _one.ClientCerts);
        Assert.True(printed.ExitCode == 1, printed.ToString());
        Assert.Equal("camdoop: metrics: 1/8 servers answered; the others' series are missing", printed.Stderr.Trim());
        var families = PrometheusExposition.Parse(printed.Stdout).ToDictionary(f => f.Name);
        Assert.Equal("0,0,0", families["camdoop_links_up"].Samples.Single().Label("server"));
        Assert.True(families.Count > 100, $"only {families.Count} families");

        var made = CliRunner.Run("metrics", "--frontend", _one.FrontEnd, "--certs", _one.ClientCerts, "--token", "--days", "3", "--json");
        Assert.True(made.ExitCode == 0, made.ToString());
        var json = JsonNode.Parse(made.Stdout)!;
        Assert.Equal($"https://127.0.0.1:{_one.Node.Web!.Server!.EndPoint.Port}/metrics", json["url"]!.GetValue<string>());
        string token = json["token"]!.GetValue<string>();
        var scraped = await GetAsync("/metrics", new AuthenticationHeaderValue("Bearer", token));
        Assert.Equal(HttpStatusCode.OK, scraped.StatusCode);
        Assert.Equal(families.Keys.Order(), PrometheusExposition.Parse(await scraped.Content.ReadAsStringAsync()).Select(f => f.Name).Order());

        var revoked = CliRunner.Run("metrics", "--frontend", _one.FrontEnd, "--certs", _one.ClientCerts, "--revoke");
        Assert.True(revoked.ExitCode == 0, revoked.ToString());
        Assert.Equal($"metrics https://127.0.0.1:{_one.Node.Web.Server.EndPoint.Port}/metrics: voided 1 scrape token", revoked.Stdout.Trim());
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/metrics", new AuthenticationHeaderValue("Bearer", token))).StatusCode);

        foreach (var usage in new[] { new[] { "--days", "3" }, ["--token", "--revoke"], ["--json"], ["--token", "--days", "0"] })
        {
            var refused = CliRunner.Run(["metrics", "--frontend", _one.FrontEnd, "--certs", _one.ClientCerts, .. usage]);
            Assert.True(refused.ExitCode == 2, refused.ToString());
            Assert.Contains("metrics: --", refused.Stderr, StringComparison.Ordinal);
        }
    }

    private async Task<HttpResponseMessage> GetAsync(string path, AuthenticationHeaderValue authorization)
    {
        using var request = new HttpRequestMessage(HttpMethod.Get, path);
        request.Headers.Authorization = authorization;
        return await _web.SendAsync(request);
    }
}
