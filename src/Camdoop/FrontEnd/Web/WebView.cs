using System.Text;
using Camdoop.FrontEnd.Auth;
using Camdoop.Monitoring.Queries;

namespace Camdoop.FrontEnd.Web;

/// <summary>
/// The live web view a front-end serves (its routes): the page and its script and style, a login form, and two JSON
/// endpoints the page polls every second: /api/state (the cube's servers, links and jobs) and /api/query?q=TEXT (the
/// latest round of any monitoring query). Every route but the login form and its assets needs the web token
/// (<see cref="WebToken"/>); a request without it gets 401 and is counted. The data comes from the monitoring
/// service's cube-wide queries only (<see cref="StandingQueries"/>), asked from this server.
/// </summary>
public sealed class WebView : IDisposable
{
    /// <summary>A query typed into the page, at most.</summary>
    public const int MaxQueryChars = 1024;

    private readonly FrontEndNode _node;
    private readonly WebToken _token;
    private readonly StandingQueries _queries;
    private long _unauthorized;
    private long _notFound;
    private long _logins;

    public WebView(FrontEndNode node, ClusterKey key, StandingQueries? queries = null)
    {
        ArgumentNullException.ThrowIfNull(node);
        ArgumentNullException.ThrowIfNull(key);
        _node = node;
        _token = new WebToken(key);
        _queries = queries ?? new StandingQueries(node);
    }

    /// <summary>Requests refused for want of the token (401), wrong logins included.</summary>
    public long Unauthorized => Interlocked.Read(ref _unauthorized);

    public long NotFound => Interlocked.Read(ref _notFound);

    /// <summary>Successful logins (cookies set).</summary>
    public long Logins => Interlocked.Read(ref _logins);

    public StandingQueries Queries => _queries;

    public async Task<HttpResponse> HandleAsync(HttpRequest request, CancellationToken cancellation)
    {
        ArgumentNullException.ThrowIfNull(request);
        switch (request.Method, request.Path)
        {
            case ("GET", "/login.js" or "/style.css"):
                return WebAssets.Get(request.Path[1..]);
            case ("POST", "/login"):
                return Login(request);
            case (not "GET", _):
                return HttpResponse.Error(405, $"method {request.Method} is not served here");
        }
        if (!_token.Authorizes(request))
        {
            Interlocked.Increment(ref _unauthorized);
            return Refuse(request.Path, "log in with the web token ('camdoop web' prints it)");
        }
        return request.Path switch
        {
            "/" or "/index.html" => WebAssets.Get("index.html"),
            "/app.js" => WebAssets.Get("app.js"),
            "/api/state" => await StateAsync().ConfigureAwait(false),
            "/api/query" => await QueryAsync(request.QueryParameter("q")).ConfigureAwait(false),
            _ => NotFoundResponse(request.Path),
        };
    }

    public void Dispose() => _queries.Dispose();

    private HttpResponse Login(HttpRequest request)
    {
        string? token = request.FormFields().GetValueOrDefault("token");
        if (token is null || !_token.Matches(token.AsSpan().Trim()))
        {
            Interlocked.Increment(ref _unauthorized);
            return Refuse("/", "wrong token");
        }
        Interlocked.Increment(ref _logins);
        return new HttpResponse(303, "text/plain; charset=utf-8", Encoding.UTF8.GetBytes("logged in\n"))
        {
            Headers =
            [
                ("Location", "/"),
                ("Set-Cookie", $"{WebToken.CookieName}={_token.Value}; Path=/; HttpOnly; SameSite=Strict"),
            ],
        };
    }

    /// <summary>401: the login page for a page, a JSON error for anything else.</summary>
    private static HttpResponse Refuse(string path, string why)
    {
        var response = path is "/" or "/index.html"
            ? WebAssets.Get("login.html") with { Status = 401 }
            : HttpResponse.Error(401, why);
        return response with { Headers = [("WWW-Authenticate", "Bearer realm=\"camdoop\"")] };
    }

    private HttpResponse NotFoundResponse(string path)
    {
        Interlocked.Increment(ref _notFound);
        return HttpResponse.Error(404, $"nothing at {Truncate(path)}");
    }

    private async Task<HttpResponse> StateAsync()
    {
        var links = _queries.PollAsync(CubeState.LinksQuery);
        var servers = _queries.PollAsync(CubeState.ServersQuery);
        var jobs = _queries.PollAsync(CubeState.JobsQuery);
        var host = _node.Loop.Host;
        var state = CubeState.Build(host.Torus, host.Self, await links.ConfigureAwait(false), await servers.ConfigureAwait(false), await jobs.ConfigureAwait(false));
        return HttpResponse.Json(200, state);
    }

    private async Task<HttpResponse> QueryAsync(string? text)
    {
        if (string.IsNullOrWhiteSpace(text))
        {
            return HttpResponse.Error(400, "give the query as ?q=select ... every 1s");
        }
        if (text.Length > MaxQueryChars)
        {
            return HttpResponse.Error(400, $"a query may have at most {MaxQueryChars} characters");
        }
        RoundPair rounds;
        try
        {
            rounds = await _queries.PollAsync(text).ConfigureAwait(false);
        }
        catch (QueryException e)
        {
            return HttpResponse.Error(400, e.Message);
        }
        if (rounds.Latest is not { } round)
        {
            return HttpResponse.Json(200, new { waiting = true });
        }
        return HttpResponse.Json(200, new
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
