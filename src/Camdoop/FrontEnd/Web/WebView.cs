using System.Globalization;
using System.Net;
using System.Security.Cryptography.X509Certificates;
using System.Text;
using Camdoop.Monitoring.Metrics;
using Camdoop.Monitoring.Queries;
using Microsoft.AspNetCore.Http;

namespace Camdoop.FrontEnd.Web;

/// <summary>
/// The live web view a front-end serves (its routes): the page and its script and style, a login form, two JSON
/// endpoints the page polls every second: /api/state (the cube's servers, links, jobs and storage) and
/// /api/query?q=TEXT (the latest round of any monitoring query), and /metrics, the whole cube's metrics for
/// Prometheus. Every route but the login and its assets needs a live session (<see cref="WebSessions"/>): a browser
/// opens one with a login code (GET /login?code=C, as `camdoop web` prints, or the login form) and ends it with POST
/// /logout; /metrics also opens to a scrape token (Authorization: Bearer, from `camdoop metrics --token`). A request
/// without either gets 401 and is counted. The data comes from the monitoring service's cube-wide queries only
/// (<see cref="StandingQueries"/>, <see cref="CubeMetrics"/>), asked from this server.
/// </summary>
public sealed class WebView : IWebLogins, IDisposable
{
    /// <summary>A query typed into the page, at most.</summary>
    public const int MaxQueryChars = 1024;

    private readonly FrontEndNode _node;
    private readonly StandingQueries _queries;
    private WebServer? _server;
    private long _unauthorized;
    private long _notFound;
    private long _logins;
    private long _scrapes;

    public WebView(FrontEndNode node, WebSessions? sessions = null, StandingQueries? queries = null)
    {
        ArgumentNullException.ThrowIfNull(node);
        _node = node;
        Sessions = sessions ?? new WebSessions();
        _queries = queries ?? new StandingQueries(node);
    }

    /// <summary>Requests refused for want of a live session (401), refused logins included.</summary>
    public long Unauthorized => Interlocked.Read(ref _unauthorized);

    public long NotFound => Interlocked.Read(ref _notFound);

    /// <summary>Successful logins (sessions opened).</summary>
    public long Logins => Interlocked.Read(ref _logins);

    /// <summary>Expositions served at /metrics.</summary>
    public long Scrapes => Interlocked.Read(ref _scrapes);

    public StandingQueries Queries => _queries;

    public WebSessions Sessions { get; }

    /// <summary>The HTTPS server serving this view, once <see cref="Start"/> has run.</summary>
    public WebServer? Server => _server;

    int? IWebLogins.Port => _server?.EndPoint.Port;

    TimeSpan IWebLogins.CodeLifetime => WebSessions.CodeLifetime;

    TimeSpan IWebLogins.SessionLifetime => Sessions.SessionLifetime;

    /// <summary>
    /// Serves the view over HTTPS on <paramref name="endpoint"/> with the certificate <paramref name="certificate"/>
    /// gives; throws <see cref="Wire.FrontEndException"/> when it cannot.
    /// </summary>
    public void Start(IPEndPoint endpoint, Func<X509Certificate2> certificate, WebServerOptions? options = null, Action<string>? log = null)
    {
        if (_server is not null)
        {
            throw new InvalidOperationException("the web view is served already");
        }
        var server = new WebServer(endpoint, certificate, HandleAsync, options, log);
        server.Start();
        _server = server;
    }

    string IWebLogins.IssueLoginCode() => Sessions.IssueLoginCode();

    (int Sessions, int LoginCodes) IWebLogins.RevokeAll()
    {
        var revoked = Sessions.RevokeAll();
        return (revoked.Sessions, revoked.LoginCodes);
    }

    (string Token, DateTimeOffset Expires) IWebLogins.IssueScrapeToken(TimeSpan lifetime) => Sessions.IssueScrapeToken(lifetime);

    int IWebLogins.RevokeScrapeTokens() => Sessions.RevokeScrapeTokens();

    public Task HandleAsync(HttpContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        return ServeAsync(context);
    }

    public void Dispose()
    {
        _server?.Dispose();
        _queries.Dispose();
    }

    private async Task ServeAsync(HttpContext context)
    {
        var response = await RespondAsync(context.Request).ConfigureAwait(false);
        await response.WriteAsync(context.Response, context.RequestAborted).ConfigureAwait(false);
    }

    private async Task<WebViewResponse> RespondAsync(HttpRequest request)
    {
        string path = request.Path.Value ?? "/";
        switch (request.Method, path)
        {
            case ("GET", "/login.js" or "/style.css"):
                return WebAssets.Get(path[1..]);
            case ("GET", "/login") when !request.Query.ContainsKey("code"):
                return WebAssets.Get("login.html");
            case ("GET", "/login"):
                return Login(request.Query["code"].ToString());
            case ("POST", "/login"):
                return Login(await FormFieldAsync(request, "code").ConfigureAwait(false));
            case ("POST", "/logout"):
                return Logout(request);
            case (not "GET", _):
                return WebViewResponse.Error(405, $"method {request.Method} is not served here");
            case (_, "/metrics"):
                return await MetricsAsync(request).ConfigureAwait(false);
        }
        if (!Sessions.IsLive(request.Cookies[WebSessions.CookieName]))
        {
            Interlocked.Increment(ref _unauthorized);
            return Refuse(path, "log in first: 'camdoop web' prints a link that does");
        }
        return path switch
        {
            "/" or "/index.html" => WebAssets.Get("index.html"),
            "/app.js" => WebAssets.Get("app.js"),
            "/api/state" => await StateAsync().ConfigureAwait(false),
            "/api/query" => await QueryAsync(request.Query["q"].ToString()).ConfigureAwait(false),
            _ => NotFoundResponse(path),
        };
    }

    /// <summary>A field of an application/x-www-form-urlencoded body (which Kestrel bounds), or null.</summary>
    private static async Task<string?> FormFieldAsync(HttpRequest request, string name)
    {
        if (!request.HasFormContentType)
        {
            return null;
        }
        var form = await request.ReadFormAsync(request.HttpContext.RequestAborted).ConfigureAwait(false);
        return form.TryGetValue(name, out var value) ? value.ToString() : null;
    }

    private WebViewResponse Login(string? code)
    {
        if (!Sessions.TryLogin(code?.Trim(), out string sessionId, out string refusal))
        {
            Interlocked.Increment(ref _unauthorized);
            return WebViewResponse.Text(401, "login refused: " + refusal);
        }
        Interlocked.Increment(ref _logins);
        long seconds = (long)Sessions.SessionLifetime.TotalSeconds;
        return WebViewResponse.Redirect("/", "logged in", ("Set-Cookie", Cookie(sessionId, seconds)));
    }

    private WebViewResponse Logout(HttpRequest request)
    {
        Sessions.End(request.Cookies[WebSessions.CookieName]);
        return WebViewResponse.Redirect("/login", "logged out", ("Set-Cookie", Cookie("", 0)));
    }

    /// <summary>
    /// The session cookie: over HTTPS only (Secure), out of the page's scripts' reach (HttpOnly), never sent with a
    /// request another site starts (SameSite=Strict), gone when the session ends (Max-Age).
    /// </summary>
    private static string Cookie(string value, long maxAgeSeconds) =>
        string.Create(CultureInfo.InvariantCulture, $"{WebSessions.CookieName}={value}; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age={maxAgeSeconds}");

    /// <summary>401: the login page for a page, a JSON error for anything else.</summary>
    private static WebViewResponse Refuse(string path, string why) => path is "/" or "/index.html"
        ? WebAssets.Get("login.html") with { Status = 401 }
        : WebViewResponse.Error(401, why);

    private WebViewResponse NotFoundResponse(string path)
    {
        Interlocked.Increment(ref _notFound);
        return WebViewResponse.Error(404, $"nothing at {Truncate(path)}");
    }

    /// <summary>
    /// The cube's Prometheus exposition, for a live session or a scrape token; a scraper without either gets 401
    /// with a Bearer challenge.
    /// </summary>
    private async Task<WebViewResponse> MetricsAsync(HttpRequest request)
    {
        if (!Sessions.IsLive(request.Cookies[WebSessions.CookieName]) && !Sessions.IsScrapeToken(BearerToken(request)))
        {
            Interlocked.Increment(ref _unauthorized);
            return WebViewResponse.Text(401, "a scrape token is needed ('camdoop metrics --token' makes one), or a session") with
            {
                Headers = [("WWW-Authenticate", "Bearer realm=\"camdoop\"")],
            };
        }
        if (_node.Metrics is not { } metrics)
        {
            return WebViewResponse.Error(503, $"server {_node.Loop.Host.Self} does not run the monitoring service");
        }
        CubeExposition exposition;
        try
        {
            exposition = await metrics.ScrapeAsync().ConfigureAwait(false);
        }
        catch (Wire.FrontEndException e)
        {
            return WebViewResponse.Error(503, e.Message);
        }
        Interlocked.Increment(ref _scrapes);
        return new WebViewResponse(200, PrometheusText.ContentType, Encoding.UTF8.GetBytes(exposition.Text));
    }

    /// <summary>The token of an "Authorization: Bearer TOKEN" header, or null.</summary>
    private static string? BearerToken(HttpRequest request)
    {
        string header = request.Headers.Authorization.ToString();
        const string scheme = "Bearer ";
        return header.StartsWith(scheme, StringComparison.OrdinalIgnoreCase) ? header[scheme.Length..].Trim() : null;
    }

    private async Task<WebViewResponse> StateAsync()
    {
        var links = _queries.PollAsync(CubeState.LinksQuery);
        var servers = _queries.PollAsync(CubeState.ServersQuery);
        var jobs = _queries.PollAsync(CubeState.JobsQuery);
        var storage = _queries.PollAsync(CubeState.StorageQuery);
        var host = _node.Loop.Host;
        var state = CubeState.Build(host.Torus, host.Self, await links.ConfigureAwait(false), await servers.ConfigureAwait(false),
            await jobs.ConfigureAwait(false), await storage.ConfigureAwait(false));
        return WebViewResponse.Json(200, state);
    }

    private async Task<WebViewResponse> QueryAsync(string? text)
    {
        if (string.IsNullOrWhiteSpace(text))
        {
            return WebViewResponse.Error(400, "give the query as ?q=select ... every 1s");
        }
        if (text.Length > MaxQueryChars)
        {
            return WebViewResponse.Error(400, $"a query may have at most {MaxQueryChars} characters");
        }
        RoundPair rounds;
        try
        {
            rounds = await _queries.PollAsync(text).ConfigureAwait(false);
        }
        catch (QueryException e)
        {
            return WebViewResponse.Error(400, e.Message);
        }
        if (rounds.Latest is not { } round)
        {
            return WebViewResponse.Json(200, new { waiting = true });
        }
        return WebViewResponse.Json(200, new
        {
            round = round.Round,
            columns = round.Columns,
            rows = round.Rows.Select(r => r.Select(v => v.ToString())),
            servers = round.Servers,
            serversInCube = round.ServersInCube,
            latencyMs = round.LatencyNs / 1e6,
        });
    }

    private static string Truncate(string text) => text.Length <= 64 ? text : text[..64] + "...";
}
