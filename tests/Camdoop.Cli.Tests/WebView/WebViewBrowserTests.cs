using System.Text.Json.Nodes;
using Camdoop.Cli.Tests.Support;
using Camdoop.Monitoring.Jobs;

namespace Camdoop.Cli.Tests.WebView;

/// <summary>
/// The web view of one server in this process, over HTTPS, in headless Chromium: the link `camdoop web` prints logs
/// the browser in (a Secure cookie, so only over TLS), the login form takes a pasted link, and the page falls back to
/// the login form when the session ends, by Log out or by `camdoop web --revoke`.
/// </summary>
public sealed class WebViewBrowserTests : IDisposable
{
    private const string ServersDrawn = "document.querySelectorAll('#cube circle.server').length";
    private const string StorageAnswered = "document.getElementById('storage-answered').textContent";
    private const string LoginForm = "document.getElementById('code') !== null";
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(30);

    /// <summary>A job that ended on the one server: the Jobs panel lists it as done.</summary>
    private static readonly JobStats Ended = new(0xabc, "wordcount", JobState.Finished, 1_200, 7_200, 7_200, 1_200,
        1_395_864_371, 5_242_880, 0, 0, 0, "jobs/0000000000000abc/output", 1_234_567, 1_700_000_000_000, 1_700_000_012_500);

    private readonly WebFrontEnd _server = new(new EndedJobs([Ended]));

    [BrowserFact]
    public void TheLinkLogsInAndLogOutOrRevokeEndsTheSession()
    {
        using var browser = HeadlessChromium.Start();
        browser.Navigate(LoginUrl());
        // The 2x2x2 torus's eight servers, drawn from the page's first /api/state.
        browser.WaitFor(ServersDrawn, v => v?.GetValue<int>() == 8, Patience, "the page's 8 servers");
        // The storage panel, once its query's first round is in: the one server answers, with an empty store.
        browser.WaitFor(StorageAnswered, v => v?.GetValue<string>() == "servers answered: 1", Patience, "the storage panel's first round");
        Assert.Equal("0", browser.Evaluate("document.getElementById('storage-replicas').textContent")!.GetValue<string>());
        Assert.Equal("0 B", browser.Evaluate("document.getElementById('storage-bytes').textContent")!.GetValue<string>());
        Assert.Equal("0 / 0", browser.Evaluate("document.getElementById('storage-corrupt').textContent")!.GetValue<string>());
        // The Jobs panel: the ended job, done, its numbers with units and thousands separators.
        string row = "document.querySelector('#jobs tr[data-job=\"0000000000000abc\"]')";
        browser.WaitFor($"{row}?.children[2].textContent", v => v?.GetValue<string>() == "done", Patience, "the ended job, done");
        var cells = browser.Evaluate($"Array.from({row}.children).map(c => c.textContent).join('|')")!.GetValue<string>().Split('|');
        Assert.Equal("wordcount", cells[1]);
        Assert.Equal("100 % (7,200/7,200 vertices)", cells[3]);
        Assert.Equal("1,200/1,200", cells[4]);
        Assert.Equal("1.3 GB", cells[5]);
        Assert.Equal("5.0 MB", cells[6]);
        Assert.Equal("jobs/0000000000000abc/output, 1.2 MB", cells[7]);
        Assert.EndsWith("(12.5 s)", cells[9], StringComparison.Ordinal);
        Assert.True(browser.Evaluate("document.getElementById('no-jobs').hidden")!.GetValue<bool>());
        Assert.Equal(_server.Url, browser.Evaluate("location.href")!.GetValue<string>());
        Assert.Equal("", browser.Evaluate("document.cookie")!.GetValue<string>());
        Assert.Equal(1, _server.View.Logins);

        browser.Evaluate("document.querySelector('form.logout').submit(); 0");
        browser.WaitFor(LoginForm, v => v?.GetValue<bool>() == true, Patience, "the login form after Log out");
        Assert.Equal(_server.Url + "login", browser.Evaluate("location.href")!.GetValue<string>());
        Assert.Equal(0, _server.View.Sessions.Count);

        browser.Navigate(LoginUrl());
        browser.WaitFor(ServersDrawn, v => v?.GetValue<int>() == 8, Patience, "the page again");
        var revoke = CliRunner.Run("web", "--frontend", _server.FrontEnd, "--certs", _server.ClientCerts, "--revoke");
        Assert.True(revoke.ExitCode == 0, revoke.ToString());
        // The page's next poll is refused: it reloads, and the page is the login form.
        browser.WaitFor(LoginForm, v => v?.GetValue<bool>() == true, Patience, "the login form after the revocation");
    }

    [BrowserFact]
    public void TheLoginFormTakesAPastedLink()
    {
        using var browser = HeadlessChromium.Start();
        browser.Navigate(_server.Url);
        browser.WaitFor(LoginForm, v => v?.GetValue<bool>() == true, Patience, "the login form");
        browser.Evaluate($"document.getElementById('code').value = '  {LoginUrl()} '; document.getElementById('login').requestSubmit(); 0");
        browser.WaitFor(ServersDrawn, v => v?.GetValue<int>() == 8, Patience, "the page after the login form");
        Assert.Equal(_server.Url, browser.Evaluate("location.href")!.GetValue<string>());
    }

    public void Dispose() => _server.Dispose();

    private sealed class EndedJobs(IReadOnlyList<JobStats> jobs) : IJobSource
    {
        public IReadOnlyList<JobStats> Snapshot() => jobs;

        public void SetLimit(ulong jobId, long bytesPerSecond, int portMask)
        {
        }
    }

    private string LoginUrl()
    {
        var result = CliRunner.Run("web", "--frontend", _server.FrontEnd, "--certs", _server.ClientCerts, "--json");
        Assert.True(result.ExitCode == 0, result.ToString());
        return JsonNode.Parse(result.Stdout)!["loginUrl"]!.GetValue<string>();
    }
}
