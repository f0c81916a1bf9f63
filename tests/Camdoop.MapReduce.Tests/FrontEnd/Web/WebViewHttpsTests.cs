using System.Net;
using System.Text.Json;
using System.Text.Json.Nodes;
using Camdoop.ChunkStore;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Web;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Tests.ChunkStore;
using Camdoop.Monitoring.Service;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Server;

namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

/// <summary>
/// The web view served over HTTPS by one real server (an event loop with the front-end's services and the monitoring
/// service, no links), its sessions on a clock the tests move: login codes, the session cookie, 401 without a live
/// session, logout, revocation and expiry; and the state the page draws, its storage panel's totals included.
/// </summary>
public sealed class WebViewHttpsTests : IDisposable
{
    private static readonly string[] Required = ["/", "/index.html", "/app.js", "/api/state", "/api/query?q=select%20count(*)%20from%20links%20every%201s"];

    private readonly string _data = Path.Combine(Path.GetTempPath(), $"camdoop-web-view-{Environment.ProcessId}-{Guid.NewGuid():N}");
    private readonly NodeEventLoop _loop;
    private readonly ChunkStoreService _store;
    private readonly ManualClock _clock = new();
    private readonly TestAuthority _authority = new();
    private readonly WebView _view;
    private readonly HttpClient _http;

    public WebViewHttpsTests()
    {
        _loop = new NodeEventLoop(driver => new NodeHost(new Coordinate(0, 0, 0), new Torus(2, 2, 2), driver, new FramePool(), new NodeOptions { DataDirectory = _data }));
        KeyRoutingService.Install(_loop.Host);
        PingService.Install(_loop.Host);
        _store = ChunkStoreService.Install(_loop.Host);
        _loop.Host.Register(new MonitorService(jobs: null, storage: new ChunkStoreStorageSource(_store)));
        _loop.Start();
        var node = new FrontEndNode(_loop, () => Task.FromResult(JsonSerializer.SerializeToElement(new { })));
        _view = new WebView(node, new WebSessions(TimeSpan.FromHours(8), _clock));
        _view.Start(new IPEndPoint(IPAddress.Loopback, 0), () => _authority.Certificate);
        _http = _authority.Client(_view.Server!.EndPoint);
    }

    [Fact]
    public async Task ALoginLinkSetsASecureSessionCookieAndRedirectsToThePage()
    {
        var login = await _http.GetAsync("/login?code=" + _view.Sessions.IssueLoginCode());
        Assert.Equal(HttpStatusCode.SeeOther, login.StatusCode);
        Assert.Equal("/", login.Headers.Location!.OriginalString);
        string cookie = login.Headers.GetValues("Set-Cookie").Single();
        Assert.Matches("^camdoop_session=[0-9a-f]{64}; ", cookie);
        string[] attributes = ["Path=/", "Secure", "HttpOnly", "SameSite=Strict", "Max-Age=28800"];
        Assert.Equal(attributes.Order(StringComparer.Ordinal), cookie.Split("; ").Skip(1).Order(StringComparer.Ordinal));
        Assert.Equal(1, _view.Logins);

        string session = SessionOf(cookie);
        var page = await GetAsync("/", session);
        Assert.Equal(HttpStatusCode.OK, page.StatusCode);
        Assert.Contains("<title>Camdoop cube</title>", await page.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        var state = await GetAsync("/api/state", session);
        Assert.Equal(HttpStatusCode.OK, state.StatusCode);
        var json = JsonNode.Parse(await state.Content.ReadAsStringAsync())!;
        Assert.Equal("2x2x2", json["torus"]!.GetValue<string>());
        Assert.Equal(0, _view.Unauthorized);
    }

    [Fact]
    public async Task TheStoragePanelShowsTheChunkStoresTotals()
    {
        var bytes = new byte[12_345];
        new Random(3).NextBytes(bytes);
        var meta = StoreCube.MetaFor(ChunkPlacement.ChunkId(_loop.Host.Torus, "web", 0, nonce: 1), bytes, "web");
        var stored = new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously);
        _loop.Post(() => _store.StoreLocal(meta, bytes, stored.SetResult));
        Assert.Null(await stored.Task.WaitAsync(TimeSpan.FromSeconds(30)));

        string session = await LogInAsync();
        string page = await (await GetAsync("/", session)).Content.ReadAsStringAsync();
        Assert.Contains("<h2>Storage", page, StringComparison.Ordinal);
        Assert.Contains("id=\"storage-replicas\"", page, StringComparison.Ordinal);
        Assert.Contains("updateStorage(state.storage)", await (await GetAsync("/app.js", session)).Content.ReadAsStringAsync(), StringComparison.Ordinal);
        // The first poll starts the storage query; its rounds come once a second.
        JsonNode? storage = null;
        for (int i = 0; i < 100 && storage?["servers"]!.GetValue<int>() != 1; i++)
        {
            await Task.Delay(100);
            var state = await GetAsync("/api/state", session);
            Assert.Equal(HttpStatusCode.OK, state.StatusCode);
            storage = JsonNode.Parse(await state.Content.ReadAsStringAsync())!["storage"];
        }
        Assert.NotNull(storage);
        Assert.Equal(1, storage["servers"]!.GetValue<int>());
        Assert.Equal(1, storage["replicas"]!.GetValue<long>());
        Assert.Equal(bytes.Length, storage["bytesStored"]!.GetValue<long>());
        Assert.Equal(0, storage["copiesPending"]!.GetValue<long>());
        Assert.Equal(0, storage["serversLost"]!.GetValue<long>());
    }

    [Fact]
    public async Task WithoutASessionOnlyTheLoginAndItsAssetsAreServed()
    {
        foreach (string path in Required)
        {
            Assert.Equal(HttpStatusCode.Unauthorized, (await _http.GetAsync(path)).StatusCode);
        }
        Assert.Equal(Required.Length, _view.Unauthorized);
        // The page itself answers 401 with the login form, which posts the code.
        string form = await (await _http.GetAsync("/")).Content.ReadAsStringAsync();
        Assert.Contains("name=\"code\"", form, StringComparison.Ordinal);
        Assert.Contains("action=\"/login\"", form, StringComparison.Ordinal);
        foreach (string open in new[] { "/login", "/login.js", "/style.css" })
        {
            Assert.Equal(HttpStatusCode.OK, (await _http.GetAsync(open)).StatusCode);
        }
        // A cookie that is no session, or someone else's made up, opens nothing.
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/api/state", new string('0', 64))).StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/api/state", "nonsense")).StatusCode);
    }

    [Fact]
    public async Task AWrongUsedOrExpiredCodeIs401WithItsReasonAndCounted()
    {
        var wrong = await _http.GetAsync("/login?code=" + new string('a', 64));
        Assert.Equal(HttpStatusCode.Unauthorized, wrong.StatusCode);
        Assert.Equal("login refused: unknown login code; ask for a new one with 'camdoop web'\n", await wrong.Content.ReadAsStringAsync());
        Assert.False(wrong.Headers.Contains("Set-Cookie"));

        string code = _view.Sessions.IssueLoginCode();
        Assert.Equal(HttpStatusCode.SeeOther, (await _http.GetAsync("/login?code=" + code)).StatusCode);
        var used = await _http.GetAsync("/login?code=" + code);
        Assert.Equal(HttpStatusCode.Unauthorized, used.StatusCode);
        Assert.StartsWith("login refused: that login code was used already", await used.Content.ReadAsStringAsync(), StringComparison.Ordinal);

        string late = _view.Sessions.IssueLoginCode();
        _clock.Advance(TimeSpan.FromSeconds(61));
        var expired = await _http.GetAsync("/login?code=" + late);
        Assert.Equal(HttpStatusCode.Unauthorized, expired.StatusCode);
        Assert.StartsWith("login refused: that login code expired", await expired.Content.ReadAsStringAsync(), StringComparison.Ordinal);
        Assert.Equal(3, _view.Unauthorized);
        Assert.Equal(1, _view.Logins);
    }

    [Fact]
    public async Task TheLoginFormPostsTheCode()
    {
        var login = await _http.PostAsync("/login", new FormUrlEncodedContent([new("code", " " + _view.Sessions.IssueLoginCode() + " ")]));
        Assert.Equal(HttpStatusCode.SeeOther, login.StatusCode);
        string session = SessionOf(login.Headers.GetValues("Set-Cookie").Single());
        Assert.Equal(HttpStatusCode.OK, (await GetAsync("/app.js", session)).StatusCode);

        Assert.Equal(HttpStatusCode.Unauthorized, (await _http.PostAsync("/login", new FormUrlEncodedContent([new("code", "guess")]))).StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, (await _http.PostAsync("/login", new StringContent("code"))).StatusCode);
        var tooLarge = await _http.PostAsync("/login", new FormUrlEncodedContent([new("code", new string('a', 5000))]));
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, tooLarge.StatusCode);
    }

    [Fact]
    public async Task ALogoutEndsTheSessionAndClearsTheCookie()
    {
        string session = await LogInAsync();
        using var logout = new HttpRequestMessage(HttpMethod.Post, "/logout");
        logout.Headers.Add("Cookie", $"{WebSessions.CookieName}={session}");
        var response = await _http.SendAsync(logout);
        Assert.Equal(HttpStatusCode.SeeOther, response.StatusCode);
        Assert.Equal("/login", response.Headers.Location!.OriginalString);
        Assert.Equal("camdoop_session=; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=0", response.Headers.GetValues("Set-Cookie").Single());
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/api/state", session)).StatusCode);
    }

    [Fact]
    public async Task ARevokedSessionIs401()
    {
        string first = await LogInAsync();
        string second = await LogInAsync();
        Assert.Equal(new WebRevocation(2, 0), _view.Sessions.RevokeAll());
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/api/state", first)).StatusCode);
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/", second)).StatusCode);
        // A new login after the revocation works.
        Assert.Equal(HttpStatusCode.OK, (await GetAsync("/app.js", await LogInAsync())).StatusCode);
    }

    [Fact]
    public async Task AnExpiredSessionIs401()
    {
        string session = await LogInAsync();
        _clock.Advance(TimeSpan.FromHours(8) - TimeSpan.FromSeconds(1));
        Assert.Equal(HttpStatusCode.OK, (await GetAsync("/app.js", session)).StatusCode);
        _clock.Advance(TimeSpan.FromSeconds(1));
        Assert.Equal(HttpStatusCode.Unauthorized, (await GetAsync("/app.js", session)).StatusCode);
    }

    [Fact]
    public async Task UnknownPathsAre404AndOtherMethods405()
    {
        string session = await LogInAsync();
        Assert.Equal(HttpStatusCode.NotFound, (await GetAsync("/etc/passwd", session)).StatusCode);
        Assert.Equal(1, _view.NotFound);
        Assert.Equal(HttpStatusCode.MethodNotAllowed, (await _http.DeleteAsync("/api/state")).StatusCode);
        var badQuery = await GetAsync("/api/query?q=" + Uri.EscapeDataString("select colour from links every 1s"), session);
        Assert.Equal(HttpStatusCode.BadRequest, badQuery.StatusCode);
        Assert.StartsWith("unknown column 'colour' in table links", JsonNode.Parse(await badQuery.Content.ReadAsStringAsync())!["error"]!.GetValue<string>(), StringComparison.Ordinal);
    }

    public void Dispose()
    {
        _http.Dispose();
        _view.Dispose();
        _loop.Dispose();
        _authority.Dispose();
        if (Directory.Exists(_data))
        {
            Directory.Delete(_data, recursive: true);
        }
    }

    private async Task<string> LogInAsync()
    {
        var login = await _http.GetAsync("/login?code=" + _view.Sessions.IssueLoginCode());
        Assert.Equal(HttpStatusCode.SeeOther, login.StatusCode);
        return SessionOf(login.Headers.GetValues("Set-Cookie").Single());
    }

    private Task<HttpResponseMessage> GetAsync(string path, string session)
    {
        var request = new HttpRequestMessage(HttpMethod.Get, path);
        request.Headers.Add("Cookie", $"{WebSessions.CookieName}={session}");
        return _http.SendAsync(request);
    }

    private static string SessionOf(string setCookie) => setCookie[(WebSessions.CookieName.Length + 1)..setCookie.IndexOf(';', StringComparison.Ordinal)];
}
