using System.Globalization;
using System.Net;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.MapReduce.Jobs;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.WebView;

/// <summary>
/// The live web view on a 3x3x3 testbed, in a real browser: Debian's Chromium, headless, driven through its
/// DevTools protocol. The page logs in with the link `camdoop web` prints, shows the cube's 27 servers, a sort job
/// running over slowed links with its progress, the result of a query, and keeps updating. Requests without the
/// token are refused and counted.
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed class WebViewTestbedTests(WebViewCube cube, ITestOutputHelper output) : IClassFixture<WebViewCube>
{
    [RootFact]
    public void ThePageShowsTheCubeARunningJobAndItsQueryAndUpdates()
    {
        Assert.Null(HeadlessChromium.WhyUnavailable());
        var (url, token, link) = WebLogin();
        Assert.Equal($"http://{cube.Server("0,0,0").Address}:7080/", url);
        Assert.Equal($"{url}#token={token}", link);

        using var browser = HeadlessChromium.Start();
        browser.Navigate(link);
        browser.WaitFor("document.querySelectorAll('#cube circle.server').length", v => v?.GetValue<int>() == 27, TimeSpan.FromSeconds(30), "27 servers on the page");
        // Logged in through the form: the token left the address bar, and the page got its first round from 27 servers.
        Assert.Equal("", browser.Evaluate("location.hash")!.GetValue<string>());
        browser.WaitFor("document.getElementById('answered')?.textContent", v => v?.GetValue<string>() == "27/27", TimeSpan.FromSeconds(30), "a round answered by all 27 servers");
        var servers = browser.Evaluate("[...document.querySelectorAll('#cube circle.server')].map(c => c.dataset.server).sort().join(' ')")!.GetValue<string>();
        Assert.Equal(string.Join(' ', cube.State.Servers.Select(s => s.Coordinate).Order(StringComparer.Ordinal)), servers);
        // The default query (grouped by port) comes back as six rows, one per port.
        var ports = browser.WaitFor("[...document.querySelectorAll('#query-result tbody tr')].map(r => r.firstChild.textContent).sort().join(' ')",
            v => v?.GetValue<string>().Split(' ').Length == 6, TimeSpan.FromSeconds(20), "the query's six rows");
        Assert.Equal("+X +Y +Z -X -Y -Z", ports!.GetValue<string>());

        // Slow links stretch the shuffle of 5.4 MB into one reducer over several seconds.
        cube.ShapeLinks("2mbit");
        string jobId;
        try
        {
            jobId = cube.Submit("--job", "sort", "--input", "records", "--reducers", "1", "--mode", "noagg");
            string row = $"document.querySelector('#jobs tr[data-job=\"{jobId}\"]')";
            browser.WaitFor($"{row}?.children[2].textContent", v => v?.GetValue<string>() == "running", TimeSpan.FromSeconds(90), $"job {jobId} running on the page");
            long firstRound = Round(browser);
            var seen = new HashSet<string>(StringComparer.Ordinal);
            var clock = System.Diagnostics.Stopwatch.StartNew();
            bool screenshot = false;
            while (clock.Elapsed < TimeSpan.FromSeconds(60))
            {
                var cells = browser.Evaluate($"{row} ? [...{row}.children].map(c => c.textContent).join(' | ') : ''")!.GetValue<string>();
                if (!cells.Contains("| running |", StringComparison.Ordinal))
                {
                    break;
                }
                Assert.Matches(@"\| \d+ % \(\d+/\d+ vertices\) \|", cells);
                seen.Add(cells);
                if (!screenshot && seen.Count >= 2 && Environment.GetEnvironmentVariable("CAMDOOP_WEB_SCREENSHOT") is { Length: > 0 } path)
                {
                    File.WriteAllBytes(path, browser.Screenshot());
                    screenshot = true;
                }
                Thread.Sleep(500);
            }
            output.WriteLine($"job {jobId} as the page showed it while running:\n{string.Join('\n', seen)}");
            Assert.True(seen.Count >= 2, $"the job's row did not change while it ran: {string.Join(" / ", seen)}");
            Assert.True(Round(browser) >= firstRound + 2, "the page's round number did not advance across seconds");

            var wait = cube.Cli("status", jobId, "--wait", "--json");
            Assert.True(wait.ExitCode == 0, wait.ToString());
            Assert.Equal("done", JsonDocument.Parse(wait.Stdout).RootElement.GetProperty("state").GetString());
        }
        finally
        {
            cube.ShapeLinks(null);
        }
        cube.AssertOutputIsTheReference(jobId, new SortJob(), cube.Records, 1);

        // A query typed into the box: a bad one is one error line on the page.
        browser.Evaluate("document.getElementById('query-text').value = 'select colour from links every 1s'; document.getElementById('query-form').requestSubmit(); 0");
        var error = browser.WaitFor("document.querySelector('#query-status.error')?.textContent", v => v is not null, TimeSpan.FromSeconds(10), "the query's error");
        Assert.StartsWith("unknown column 'colour' in table links", error!.GetValue<string>(), StringComparison.Ordinal);
    }

    [RootFact]
    public void RequestsWithoutTheTokenAreRefusedAndCountedAndBadOnesAnswered400()
    {
        var (url, token, _) = WebLogin();
        var frontEnd = cube.Server("0,0,0");
        long before = WebCounter(frontEnd, "unauthorized");
        using var http = new HttpClient(new HttpClientHandler { UseCookies = false, AllowAutoRedirect = false }) { BaseAddress = new Uri(url) };

        var page = http.GetAsync("/").Result;
        Assert.Equal(HttpStatusCode.Unauthorized, page.StatusCode);
        Assert.Contains("name=\"token\"", page.Content.ReadAsStringAsync().Result, StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.Unauthorized, http.GetAsync("/api/state").Result.StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, http.GetAsync("/app.js").Result.StatusCode);
        using (var wrong = new HttpRequestMessage(HttpMethod.Get, "/api/state"))
        {
            wrong.Headers.Add("Authorization", "Bearer " + new string('0', 64));
            Assert.Equal(HttpStatusCode.Unauthorized, http.SendAsync(wrong).Result.StatusCode);
        }
        using (var cookie = new HttpRequestMessage(HttpMethod.Get, "/api/state"))
        {
            // One hex digit changed: the last, to one it is not.
            cookie.Headers.Add("Cookie", "camdoop_web=" + token[..63] + (token[63] == '1' ? "2" : "1"));
            Assert.Equal(HttpStatusCode.Unauthorized, http.SendAsync(cookie).Result.StatusCode);
        }
        var badLogin = http.PostAsync("/login", new FormUrlEncodedContent([new("token", "not-the-token")])).Result;
        Assert.Equal(HttpStatusCode.Unauthorized, badLogin.StatusCode);
        Assert.Null(badLogin.Headers.GetValues("WWW-Authenticate").FirstOrDefault(v => v.Contains("Basic", StringComparison.Ordinal)));
        EmulatedCube.WaitUntil(() => WebCounter(frontEnd, "unauthorized") >= before + 6, "the 6 refusals were not counted in status.json");

        // The right token in the login form sets the cookie; with it, the state has the cube's 27 servers.
        var login = http.PostAsync("/login", new FormUrlEncodedContent([new("token", token)])).Result;
        Assert.Equal(HttpStatusCode.SeeOther, login.StatusCode);
        string setCookie = login.Headers.GetValues("Set-Cookie").Single();
        Assert.StartsWith($"camdoop_web={token};", setCookie, StringComparison.Ordinal);
        Assert.Contains("HttpOnly", setCookie, StringComparison.Ordinal);
        using (var authed = new HttpRequestMessage(HttpMethod.Get, "/api/state"))
        {
            authed.Headers.Add("Cookie", $"camdoop_web={token}");
            var state = http.SendAsync(authed).Result;
            Assert.Equal(HttpStatusCode.OK, state.StatusCode);
            var json = JsonNode.Parse(state.Content.ReadAsStringAsync().Result)!;
            Assert.Equal(27, json["servers"]!.AsArray().Count);
            Assert.Equal("3x3x3", json["torus"]!.GetValue<string>());
        }

        // Bad requests: one 400 (or 431) each, and the server serves on.
        long bad = WebCounter(frontEnd, "badRequests");
        var host = new Uri(url);
        Assert.StartsWith("HTTP/1.1 400 ", Raw(host, "NOT A REQUEST\r\n\r\n"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 400 ", Raw(host, "GET http://elsewhere/ HTTP/1.1\r\n\r\n"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 400 ", Raw(host, "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 431 ", Raw(host, "GET / HTTP/1.1\r\nX-Filler: " + new string('a', 9000) + "\r\n\r\n"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 413 ", Raw(host, "POST /login HTTP/1.1\r\nContent-Length: 100000\r\n\r\n"), StringComparison.Ordinal);
        EmulatedCube.WaitUntil(() => WebCounter(frontEnd, "badRequests") >= bad + 5, "the 5 bad requests were not counted in status.json");
        using var again = new HttpRequestMessage(HttpMethod.Get, "/api/query?q=" + Uri.EscapeDataString("select count(*) from servers every 1s"));
        again.Headers.Add("Authorization", "Bearer " + token);
        var query = http.SendAsync(again).Result;
        Assert.Equal(HttpStatusCode.OK, query.StatusCode);
    }

    private (string Url, string Token, string Link) WebLogin()
    {
        var web = CliRunner.Run("web", "--prefix", WebViewCube.Prefix, "--json");
        Assert.True(web.ExitCode == 0, web.ToString());
        var json = JsonNode.Parse(web.Stdout)!;
        return (json["url"]!.GetValue<string>(), json["token"]!.GetValue<string>(), json["link"]!.GetValue<string>());
    }

    private static long Round(HeadlessChromium browser) =>
        long.Parse(browser.Evaluate("document.getElementById('round').textContent")!.GetValue<string>(), CultureInfo.InvariantCulture);

    private long WebCounter(Camdoop.Cli.Testbed.TestbedServer server, string name) =>
        cube.NodeStatusOf(server).Counters.GetValueOrDefault("web")?.GetValueOrDefault(name) ?? 0;

    /// <summary>Sends raw bytes as a request and returns the response's status line and the rest.</summary>
    private static string Raw(Uri url, string request)
    {
        using var client = new TcpClient(url.Host, url.Port);
        using var stream = client.GetStream();
        stream.ReadTimeout = 15_000;
        stream.Write(Encoding.ASCII.GetBytes(request));
        client.Client.Shutdown(SocketShutdown.Send);
        using var reader = new StreamReader(stream, Encoding.ASCII);
        try
        {
            return reader.ReadToEnd();
        }
        catch (IOException e)
        {
            return $"(connection reset: {e.Message})";
        }
    }
}
