using System.Buffers;
using System.Net;
using System.Text.Json;
using Camdoop.ChunkStore;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Web;
using Camdoop.FrontEnd.Wire;
using Camdoop.KeyRouting;
using Camdoop.Monitoring.Service;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

/// <summary>
/// The front-end's "web-login", "web-revoke", "metrics-token" and "metrics-revoke", served by a session of a server
/// with and without a web view.
/// </summary>
public sealed class WebOperationsTests : IDisposable
{
    private readonly string _data = Path.Combine(Path.GetTempPath(), $"camdoop-web-ops-{Environment.ProcessId}-{Guid.NewGuid():N}");
    private readonly NodeEventLoop _loop;
    private readonly FrontEndNode _node;
    private readonly TestAuthority _authority = new();
    private readonly WebView _view;

    public WebOperationsTests()
    {
        _loop = new NodeEventLoop(driver => new NodeHost(new Coordinate(1, 0, 0), new Torus(2, 2, 2), driver, new FramePool(), new NodeOptions { DataDirectory = _data }));
        KeyRoutingService.Install(_loop.Host);
        PingService.Install(_loop.Host);
        ChunkStoreService.Install(_loop.Host);
        _loop.Host.Register(new MonitorService(jobs: null));
        _loop.Start();
        _node = new FrontEndNode(_loop, () => Task.FromResult(JsonSerializer.SerializeToElement(new { })));
        _view = new WebView(_node, new WebSessions(TimeSpan.FromHours(2)));
        _view.Start(new IPEndPoint(IPAddress.Loopback, 0), () => _authority.Certificate);
    }

    [Fact]
    public void TheOperationsAreOnTheWire()
    {
        Assert.True(FrontEndOperations.All.TryRead("web-login", new ReadOnlySequence<byte>(FrontEndWire.Serialize(new WebLoginRequest())), out var login));
        Assert.IsType<WebLoginRequest>(login);
        Assert.True(FrontEndOperations.All.TryRead("web-revoke", new ReadOnlySequence<byte>(FrontEndWire.Serialize(new WebRevokeRequest())), out var revoke));
        Assert.IsType<WebRevokeRequest>(revoke);
    }

    [Fact]
    public async Task ALoginIsAFreshCodeWithThePortAndLifetimes()
    {
        var reply = await CallAsync<WebLoginReply>(new FrontEndSession(_node, web: _view), new WebLoginRequest { Id = 7 });
        Assert.Equal(7, reply.Id);
        Assert.Matches("^[0-9a-f]{64}$", reply.Code);
        Assert.Equal(_view.Server!.EndPoint.Port, reply.Port);
        Assert.Equal(60, reply.ExpiresInSeconds);
        Assert.Equal(7200, reply.SessionSeconds);
        Assert.True(_view.Sessions.TryLogin(reply.Code, out _, out string refusal), refusal);
    }

    [Fact]
    public async Task ARevocationEndsEverySessionAndSaysHowMany()
    {
        var session = new FrontEndSession(_node, web: _view);
        var first = await CallAsync<WebLoginReply>(session, new WebLoginRequest());
        Assert.True(_view.Sessions.TryLogin(first.Code, out string browser, out _));
        await CallAsync<WebLoginReply>(session, new WebLoginRequest());
        var revoked = await CallAsync<WebRevokeReply>(session, new WebRevokeRequest());
        Assert.Equal(1, revoked.Sessions);
        Assert.Equal(1, revoked.LoginCodes);
        Assert.Equal(_view.Server!.EndPoint.Port, revoked.Port);
        Assert.False(_view.Sessions.IsLive(browser));
    }

    [Fact]
    public async Task AServerWithoutAWebViewSaysSoInOneLine()
    {
        foreach (FrontEndRequest request in new FrontEndRequest[] { new WebLoginRequest(), new WebRevokeRequest(), new MetricsTokenRequest(), new MetricsRevokeRequest() })
        {
            var e = await Assert.ThrowsAsync<FrontEndException>(() => new FrontEndSession(_node).HandleAsync(request, new FrontEndReplies(Stream.Null, TimeSpan.FromSeconds(5), () => { }), CancellationToken.None));
            Assert.Equal("server (1,0,0) serves no web view ('webPort' in its node config)", e.Message);
        }
    }

    [Fact]
    public async Task AScrapeTokenLastsTheDaysAskedAndRevokingTokensLeavesSessions()
    {
        var session = new FrontEndSession(_node, web: _view);
        var login = await CallAsync<WebLoginReply>(session, new WebLoginRequest());
        Assert.True(_view.Sessions.TryLogin(login.Code, out string browser, out _));
        var issued = await CallAsync<MetricsTokenReply>(session, new MetricsTokenRequest { Days = 7 });
        Assert.Matches("^[0-9a-f]{64}$", issued.Token);
        Assert.Equal(_view.Server!.EndPoint.Port, issued.Port);
        Assert.InRange(issued.ExpiresUnixSeconds - DateTimeOffset.UtcNow.ToUnixTimeSeconds(), (7 * 86_400) - 60, 7 * 86_400);
        Assert.True(_view.Sessions.IsScrapeToken(issued.Token));
        // A token is no session, and a session no token.
        Assert.False(_view.Sessions.IsLive(issued.Token));
        Assert.False(_view.Sessions.IsScrapeToken(browser));
        var standard = await CallAsync<MetricsTokenReply>(session, new MetricsTokenRequest());
        Assert.InRange(standard.ExpiresUnixSeconds - DateTimeOffset.UtcNow.ToUnixTimeSeconds(), (FrontEndSession.DefaultScrapeTokenDays * 86_400) - 60, FrontEndSession.DefaultScrapeTokenDays * 86_400);

        var revoked = await CallAsync<MetricsRevokeReply>(session, new MetricsRevokeRequest());
        Assert.Equal(2, revoked.Tokens);
        Assert.False(_view.Sessions.IsScrapeToken(issued.Token));
        Assert.True(_view.Sessions.IsLive(browser));
        // And `camdoop web --revoke` leaves tokens be.
        var again = await CallAsync<MetricsTokenReply>(session, new MetricsTokenRequest { Days = 1 });
        await CallAsync<WebRevokeReply>(session, new WebRevokeRequest());
        Assert.True(_view.Sessions.IsScrapeToken(again.Token));
        Assert.False(_view.Sessions.IsLive(browser));

        foreach (long days in new long[] { 0, 367, -1 })
        {
            var e = await Assert.ThrowsAsync<FrontEndException>(() => session.HandleAsync(new MetricsTokenRequest { Days = days }, new FrontEndReplies(Stream.Null, TimeSpan.FromSeconds(5), () => { }), CancellationToken.None));
            Assert.Contains("days", e.Message, StringComparison.Ordinal);
        }
    }

    public void Dispose()
    {
        _view.Dispose();
        _loop.Dispose();
        _authority.Dispose();
        if (Directory.Exists(_data))
        {
            Directory.Delete(_data, recursive: true);
        }
    }

    private static async Task<T> CallAsync<T>(FrontEndSession session, FrontEndRequest request)
        where T : class
    {
        using var wire = new MemoryStream();
        var replies = new FrontEndReplies(wire, TimeSpan.FromSeconds(5), () => { });
        replies.Begin(request.Id);
        await session.HandleAsync(request, replies, CancellationToken.None);
        wire.Position = 0;
        byte[] body = MessageFraming.Read(wire) ?? throw new InvalidDataException("no reply");
        return FrontEndWire.Read<T>(new ReadOnlySequence<byte>(body));
    }
}
