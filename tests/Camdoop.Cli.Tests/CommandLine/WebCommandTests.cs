using System.Net;
using System.Text.Json.Nodes;
using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.CommandLine;

/// <summary>
/// `camdoop web` against a front-end and web view in this process: the login link it prints logs a browser in over
/// HTTPS once, --revoke ends the session; and its errors in one line.
/// </summary>
public sealed class WebCommandTests : IDisposable
{
    private readonly WebFrontEnd _server = new();

    [Fact]
    public async Task TheLoginLinkLogsInOnceAndRevokeEndsTheSession()
    {
        var result = Web("--json");
        Assert.True(result.ExitCode == 0, result.ToString());
        var json = JsonNode.Parse(result.Stdout)!;
        Assert.Equal(_server.Url, json["url"]!.GetValue<string>());
        string loginUrl = json["loginUrl"]!.GetValue<string>();
        Assert.Matches($"^{_server.Url.Replace(".", "\\.", StringComparison.Ordinal)}login\\?code=[0-9a-f]{{64}}$", loginUrl);
        Assert.Equal(60, json["expiresInSeconds"]!.GetValue<long>());
        Assert.Equal(8 * 3600, json["sessionSeconds"]!.GetValue<long>());

        using var browser = _server.Browser();
        var login = await browser.GetAsync(loginUrl);
        Assert.Equal(HttpStatusCode.SeeOther, login.StatusCode);
        string cookie = login.Headers.GetValues("Set-Cookie").Single().Split(';')[0];
        Assert.Equal(HttpStatusCode.OK, (await GetAsync(browser, "api/state", cookie)).StatusCode);
        // The link works once.
        Assert.Equal(HttpStatusCode.Unauthorized, (await browser.GetAsync(loginUrl)).StatusCode);

        var revoke = Web("--revoke", "--json");
        Assert.True(revoke.ExitCode == 0, revoke.ToString());
        var revoked = JsonNode.Parse(revoke.Stdout)!;
        Assert.Equal(_server.Url, revoked["url"]!.GetValue<string>());
        Assert.Equal(1, revoked["sessions"]!.GetValue<long>());
        Assert.Equal(0, revoked["loginCodes"]!.GetValue<long>());
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync(browser, "api/state", cookie)).StatusCode);
    }

    [Fact]
    public void ItPrintsTheLinkAndHowLongItLastsAndRevokeSaysHowMany()
    {
        var result = Web();
        Assert.True(result.ExitCode == 0, result.ToString());
        var lines = result.Stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal($"web view: {_server.Url}", lines[0]);
        Assert.Matches($"^log in:   {_server.Url.Replace(".", "\\.", StringComparison.Ordinal)}login\\?code=[0-9a-f]{{64}}$", lines[1]);
        Assert.StartsWith("(the link works once, within 60 s; the session it opens lasts 8 h, until 'camdoop web --revoke'.", lines[2], StringComparison.Ordinal);

        var revoke = Web("--revoke");
        Assert.True(revoke.ExitCode == 0, revoke.ToString());
        Assert.Equal($"web view {_server.Url}: ended 0 sessions, voided 1 unused login code\n", revoke.Stdout);
    }

    [Fact]
    public void BadArgumentsAreOneLine()
    {
        OneLineError.Assert(CliRunner.Run("web", "--prefix", "nowq"), "no testbed 'nowq' is up");
        var noKey = CliRunner.Run("web", "--frontend", _server.FrontEnd, "--certs", Path.Combine(Path.GetTempPath(), "missing-camdoop-certs"));
        Assert.True(noKey.ExitCode == 1, noKey.ToString());
        Assert.Contains("missing-camdoop-certs does not exist", Assert.Single(noKey.Stderr.Trim().Split('\n')), StringComparison.Ordinal);
        // No front-end listens on port 9 of this address.
        var unreachable = CliRunner.RunWith(new Dictionary<string, string?> { ["CAMDOOP_CERTS"] = _server.ClientCerts }, "web", "--frontend", "127.0.0.1:9");
        OneLineError.Assert(unreachable, "127.0.0.1:9");
        foreach (var (args, expected) in new[]
        {
            (new[] { "web", "--frontend", "127.0.0.1:9", "--server", "0,0,0" }, "--server picks a testbed's server; with --frontend give that server's front-end instead"),
            (new[] { "web", "--url", "https://192.0.2.7:7080/" }, "unknown option --url"),
        })
        {
            var result = CliRunner.Run(args);
            Assert.True(result.ExitCode == 2, result.ToString());
            Assert.Contains(expected, Assert.Single(result.Stderr.Trim().Split('\n')), StringComparison.Ordinal);
        }
    }

    public void Dispose() => _server.Dispose();

    private CliResult Web(params string[] args) => CliRunner.Run(["web", "--frontend", _server.FrontEnd, "--certs", _server.ClientCerts, .. args]);

    private Task<HttpResponseMessage> GetAsync(HttpClient browser, string path, string cookie)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, _server.Url + path);
        request.Headers.Add("Cookie", cookie);
        return browser.SendAsync(request);
    }
}
