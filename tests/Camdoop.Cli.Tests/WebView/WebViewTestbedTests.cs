using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Text;
using System.Text.Json;
using System.Text.Json.Nodes;
using System.Text.RegularExpressions;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.MapReduce.Jobs;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.WebView;

/// <summary>
/// The live web view on a 3x3x3 testbed, over HTTPS, in a real browser: Debian's Chromium, headless, driven through
/// its DevTools protocol. The page logs in with the one-time link `camdoop web` prints, shows the cube's 27 servers,
/// a sort job running over slowed links with its progress, the result of a query, and keeps updating. Requests
/// without a live session are refused and counted, and `camdoop web --revoke` ends the sessions.
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed class WebViewTestbedTests(WebViewCube cube, ITestOutputHelper output) : IClassFixture<WebViewCube>
{
    [RootFact]
    public void ThePageShowsTheCubeARunningJobAndItsQueryAndUpdates()
    {
        Assert.Null(HeadlessChromium.WhyUnavailable());
        var (url, loginUrl) = WebLogin();
        Assert.Equal($"https://{cube.Server("0,0,0").Address}:7080/", url);
        Assert.Matches("^" + Regex.Escape(url) + "login\\?code=[0-9a-f]{64}$", loginUrl);

        using var browser = HeadlessChromium.Start();
        browser.Navigate(loginUrl);
        browser.WaitFor("document.querySelectorAll('#cube circle.server').length", v => v?.GetValue<int>() == 27, TimeSpan.FromSeconds(30), "27 servers on the page");
        // Logged in by the link: redirected to the page, the code gone from the address bar, the session cookie out
        // of the page's reach (HttpOnly), and the page got its first round from 27 servers.
        Assert.Equal(url, browser.Evaluate("location.href")!.GetValue<string>());
        Assert.Equal("", browser.Evaluate("document.cookie")!.GetValue<string>());
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
    public void RequestsWithoutASessionAreRefusedAndCountedAndRevokeEndsSessions()
    {
        var (url, loginUrl) = WebLogin();
        var frontEnd = cube.Server("0,0,0");
        long before = WebCounter(frontEnd, "unauthorized");
        // The nodes' certificates come from a CA this test does not hold: any certificate is accepted here, the
        // certificate's checks are the in-process tests' (WebServerTests).
        using var http = new HttpClient(new HttpClientHandler
        {
            UseCookies = false,
            AllowAutoRedirect = false,
            ServerCertificateCustomValidationCallback = HttpClientHandler.DangerousAcceptAnyServerCertificateValidator,
        })
        { BaseAddress = new Uri(url) };

        var page = http.GetAsync("/").Result;
        Assert.Equal(HttpStatusCode.Unauthorized, page.StatusCode);
        Assert.Contains("name=\"code\"", page.Content.ReadAsStringAsync().Result, StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.Unauthorized, http.GetAsync("/api/state").Result.StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, http.GetAsync("/app.js").Result.StatusCode);
        using (var cookie = new HttpRequestMessage(HttpMethod.Get, "/api/state"))
        {
            cookie.Headers.Add("Cookie", "camdoop_session=" + new string('0', 64));
            Assert.Equal(HttpStatusCode.Unauthorized, http.SendAsync(cookie).Result.StatusCode);
        }
        var badLogin = http.PostAsync("/login", new FormUrlEncodedContent([new("code", "not-a-code")])).Result;
        Assert.Equal(HttpStatusCode.Unauthorized, badLogin.StatusCode);
        Assert.StartsWith("login refused: ", badLogin.Content.ReadAsStringAsync().Result, StringComparison.Ordinal);
        Assert.Equal(HttpStatusCode.Unauthorized, http.GetAsync("/login?code=" + new string('f', 64)).Result.StatusCode);
        EmulatedCube.WaitUntil(() => WebCounter(frontEnd, "unauthorized") >= before + 6, "the 6 refusals were not counted in status.json");

        // The printed link opens a session: a cookie for HTTPS only, out of scripts' reach, not sent cross-site.
        var login = http.GetAsync(loginUrl).Result;
        Assert.Equal(HttpStatusCode.SeeOther, login.StatusCode);
        string setCookie = login.Headers.GetValues("Set-Cookie").Single();
        Assert.Matches("^camdoop_session=[0-9a-f]{64}; ", setCookie);
        foreach (string attribute in new[] { "Secure", "HttpOnly", "SameSite=Strict", "Max-Age=28800" })
        {
            Assert.Contains("; " + attribute, setCookie, StringComparison.Ordinal);
        }
        string session = setCookie.Split(';')[0];
        Assert.Equal(HttpStatusCode.Unauthorized, http.GetAsync(loginUrl).Result.StatusCode);
        using (var authed = new HttpRequestMessage(HttpMethod.Get, "/api/state"))
        {
            authed.Headers.Add("Cookie", session);
            var state = http.SendAsync(authed).Result;
            Assert.Equal(HttpStatusCode.OK, state.StatusCode);
            var json = JsonNode.Parse(state.Content.ReadAsStringAsync().Result)!;
            Assert.Equal(27, json["servers"]!.AsArray().Count);
            Assert.Equal("3x3x3", json["torus"]!.GetValue<string>());
        }

        // Bad requests: Kestrel answers them (400, 431, 413), counts them, and serves on; plain HTTP gets nothing.
        long bad = WebCounter(frontEnd, "badRequests");
        long handshakes = WebCounter(frontEnd, "handshakeFailures");
        var host = new Uri(url);
        Assert.StartsWith("HTTP/1.1 400 ", OverTls(host, "GET / HTTP/1.1\r\nNo colon in this header\r\n\r\n"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 431 ", OverTls(host, $"GET / HTTP/1.1\r\nHost: {host.Host}\r\nX-Filler: " + new string('a', 9000) + "\r\n\r\n"), StringComparison.Ordinal);
        Assert.StartsWith("HTTP/1.1 413 ", OverTls(host, $"POST /login HTTP/1.1\r\nHost: {host.Host}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\n\r\ncode="), StringComparison.Ordinal);
        Assert.DoesNotContain("HTTP/1.1", InTheClear(host, $"GET / HTTP/1.1\r\nHost: {host.Host}\r\n\r\n"), StringComparison.Ordinal);
        EmulatedCube.WaitUntil(() => WebCounter(frontEnd, "badRequests") >= bad + 3, "the 3 bad requests were not counted in status.json");
        EmulatedCube.WaitUntil(() => WebCounter(frontEnd, "handshakeFailures") >= handshakes + 1, "the plain HTTP request was not counted in status.json");
        using (var query = new HttpRequestMessage(HttpMethod.Get, "/api/query?q=" + Uri.EscapeDataString("select count(*) from servers every 1s")))
        {
            query.Headers.Add("Cookie", session);
            Assert.Equal(HttpStatusCode.OK, http.SendAsync(query).Result.StatusCode);
        }

        // Revoked: the session is over, and so is an unused code.
        var (_, unused) = WebLogin();
        var revoke = CliRunner.Run("web", "--prefix", WebViewCube.Prefix, "--revoke", "--json");
        Assert.True(revoke.ExitCode == 0, revoke.ToString());
        var revoked = JsonNode.Parse(revoke.Stdout)!;
        Assert.True(revoked["sessions"]!.GetValue<long>() >= 1, revoke.Stdout);
        Assert.True(revoked["loginCodes"]!.GetValue<long>() >= 1, revoke.Stdout);
        using (var after = new HttpRequestMessage(HttpMethod.Get, "/api/state"))
        {
            after.Headers.Add("Cookie", session);
            Assert.Equal(HttpStatusCode.Unauthorized, http.SendAsync(after).Result.StatusCode);
        }
        Assert.Equal(HttpStatusCode.Unauthorized, http.GetAsync(unused).Result.StatusCode);
    }

    private (string Url, string LoginUrl) WebLogin()
    {
        var web = CliRunner.Run("web", "--prefix", WebViewCube.Prefix, "--json");
        Assert.True(web.ExitCode == 0, web.ToString());
        var json = JsonNode.Parse(web.Stdout)!;
        return (json["url"]!.GetValue<string>(), json["loginUrl"]!.GetValue<string>());
    }

    private static long Round(HeadlessChromium browser) =>
        long.Parse(browser.Evaluate("document.getElementById('round').textContent")!.GetValue<string>(), CultureInfo.InvariantCulture);

    private long WebCounter(Camdoop.Cli.Testbed.TestbedServer server, string name) =>
        cube.NodeStatusOf(server).Counters.GetValueOrDefault("web")?.GetValueOrDefault(name) ?? 0;

    /// <summary>Sends raw bytes as a request over TLS (any certificate taken) and returns the response.</summary>
    private static string OverTls(Uri url, string request)
    {
        using var client = new TcpClient(url.Host, url.Port);
        using var tls = new SslStream(client.GetStream(), leaveInnerStreamOpen: false, (_, _, _, _) => true);
        tls.AuthenticateAsClient(url.Host);
        tls.ReadTimeout = 15_000;
        tls.Write(Encoding.ASCII.GetBytes(request));
        using var reader = new StreamReader(tls, Encoding.ASCII);
        try
        {
            // The status line is enough, and Kestrel may keep the connection open after it.
            return reader.ReadLine() + "\r\n";
        }
        catch (IOException e)
        {
            return $"(connection reset: {e.Message})";
        }
    }

    /// <summary>Sends raw bytes in the clear to the HTTPS port and returns whatever comes back before it closes.</summary>
    private static string InTheClear(Uri url, string request)
    {
        using var client = new TcpClient(url.Host, url.Port);
        using var stream = client.GetStream();
        stream.ReadTimeout = 15_000;
        stream.Write(Encoding.ASCII.GetBytes(request));
        client.Client.Shutdown(SocketShutdown.Send);
        using var reader = new StreamReader(stream, Encoding.Latin1);
        try
        {
            return reader.ReadToEnd();
        }
        catch (IOException)
        {
            return "";
        }
    }
}
