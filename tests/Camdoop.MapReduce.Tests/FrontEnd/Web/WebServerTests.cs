using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using System.Text;
using Camdoop.FrontEnd.Web;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

/// <summary>
/// The web view's HTTPS server (Kestrel) on loopback, with a handler that echoes the request: TLS and nothing in the
/// clear, Kestrel's limits, and what it counts.
/// </summary>
public sealed class WebServerTests : IDisposable
{
    private static readonly WebServerOptions Limits = new()
    {
        MaxHeaderBytes = 2048,
        MaxHeaderCount = 16,
        MaxBodyBytes = 64,
        RequestHeadersTimeout = TimeSpan.FromSeconds(1),
    };

    private readonly TestAuthority _authority = new();
    private readonly List<string> _log = [];
    private readonly WebServer _server;

    public WebServerTests()
    {
        _server = Start(Limits);
    }

    [Fact]
    public async Task ARequestReachesTheHandlerOverTlsWithTheSecurityHeaders()
    {
        using var http = _authority.Client(_server.EndPoint);
        var response = await http.GetAsync("/echo?q=a%20b");
        Assert.Equal(HttpStatusCode.OK, response.StatusCode);
        Assert.Equal("GET /echo q=a b\n", await response.Content.ReadAsStringAsync());
        Assert.Equal("no-store", response.Headers.CacheControl!.ToString());
        Assert.StartsWith("default-src 'none';", response.Headers.GetValues("Content-Security-Policy").Single(), StringComparison.Ordinal);
        Assert.Equal("nosniff", response.Headers.GetValues("X-Content-Type-Options").Single());
        Assert.False(response.Headers.Contains("Server"));
        Assert.Equal(1, _server.Requests);
    }

    [Fact]
    public async Task TheServerSpeaksTls13AndShowsTheNodeCertificate()
    {
        using var client = new TcpClient();
        await client.ConnectAsync(_server.EndPoint);
        using var tls = new SslStream(client.GetStream());
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "127.0.0.1",
            RemoteCertificateValidationCallback = (_, certificate, _, errors) => _authority.Trusts(certificate, errors),
        });
        Assert.Equal(SslProtocols.Tls13, tls.SslProtocol);
        Assert.Equal(_authority.Certificate.Thumbprint, tls.RemoteCertificate!.GetCertHashString());
    }

    [Fact]
    public async Task AClientWithoutTls13GetsTls12WithForwardSecrecyAndAnAeadCipher()
    {
        using var client = new TcpClient();
        await client.ConnectAsync(_server.EndPoint);
        using var tls = new SslStream(client.GetStream());
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "127.0.0.1",
            EnabledSslProtocols = SslProtocols.Tls12,
            RemoteCertificateValidationCallback = (_, certificate, _, errors) => _authority.Trusts(certificate, errors),
        });
        Assert.Equal(SslProtocols.Tls12, tls.SslProtocol);
        Assert.Matches("^TLS_ECDHE_ECDSA_WITH_(AES_128_GCM|AES_256_GCM|CHACHA20_POLY1305)_SHA(256|384)$", tls.NegotiatedCipherSuite.ToString());

        // A client offering only a CBC suite finds none in common (a policy the platform sets where it is OpenSSL).
        if (!OperatingSystem.IsLinux())
        {
            return;
        }
        using var cbcClient = new TcpClient();
        await cbcClient.ConnectAsync(_server.EndPoint);
        using var cbc = new SslStream(cbcClient.GetStream());
        var cbcOnly = new SslClientAuthenticationOptions
        {
            TargetHost = "127.0.0.1",
            EnabledSslProtocols = SslProtocols.Tls12,
            CipherSuitesPolicy = new CipherSuitesPolicy([TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256]),
            RemoteCertificateValidationCallback = (_, certificate, _, errors) => _authority.Trusts(certificate, errors),
        };
        await Assert.ThrowsAnyAsync<Exception>(() => cbc.AuthenticateAsClientAsync(cbcOnly));
    }

    [Fact]
    public async Task AClientThatDoesNotTrustTheCaIsRefusedByItself()
    {
        using var http = new HttpClient { BaseAddress = new Uri($"https://{_server.EndPoint}/") };
        var refused = await Assert.ThrowsAsync<HttpRequestException>(() => http.GetAsync("/echo"));
        Assert.IsType<AuthenticationException>(refused.InnerException);
        Assert.Equal(0, _server.Requests);
    }

    [Fact]
    public async Task PlainHttpToTheHttpsPortIsServedNothing()
    {
        string answer = Raw("GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
        Assert.DoesNotContain("HTTP/1.1", answer, StringComparison.Ordinal);
        Assert.DoesNotContain("GET /echo", answer, StringComparison.Ordinal);
        await WaitForAsync(() => _server.HandshakeFailures >= 1, "the failed handshake to be counted");
        Assert.Equal(0, _server.Requests);
    }

    [Fact]
    public async Task HeadersBeyondTheLimitsAreRefusedByKestrelAndCounted()
    {
        using var http = _authority.Client(_server.EndPoint);
        using (var large = new HttpRequestMessage(HttpMethod.Get, "/echo"))
        {
            large.Headers.Add("X-Filler", new string('a', 3000));
            Assert.Equal(HttpStatusCode.RequestHeaderFieldsTooLarge, (await http.SendAsync(large)).StatusCode);
        }
        using (var many = new HttpRequestMessage(HttpMethod.Get, "/echo"))
        {
            for (int i = 0; i < 20; i++)
            {
                many.Headers.Add($"X-Header-{i}", "x");
            }
            Assert.Equal(HttpStatusCode.RequestHeaderFieldsTooLarge, (await http.SendAsync(many)).StatusCode);
        }
        await WaitForAsync(() => _server.BadRequests == 2, "the two refusals to be counted");
        Assert.Equal(0, _server.Requests);
        // And the server serves on.
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync("/echo")).StatusCode);
    }

    [Fact]
    public async Task ABodyBeyondTheLimitIs413()
    {
        using var http = _authority.Client(_server.EndPoint);
        var response = await http.PostAsync("/echo", new StringContent(new string('a', 65)));
        Assert.Equal(HttpStatusCode.RequestEntityTooLarge, response.StatusCode);
        await WaitForAsync(() => _server.BadRequests == 1, "the refusal to be counted");
        Assert.Equal(HttpStatusCode.OK, (await http.PostAsync("/echo", new StringContent(new string('a', 64)))).StatusCode);
    }

    [Fact]
    public async Task AClientTooSlowToSendItsHeadersGets408()
    {
        using var client = new TcpClient();
        await client.ConnectAsync(_server.EndPoint);
        using var tls = new SslStream(client.GetStream());
        await tls.AuthenticateAsClientAsync(new SslClientAuthenticationOptions
        {
            TargetHost = "127.0.0.1",
            RemoteCertificateValidationCallback = (_, certificate, _, errors) => _authority.Trusts(certificate, errors),
        });
        await tls.WriteAsync("GET /echo HTTP/1.1\r\nHost: 127.0.0.1\r\n"u8.ToArray());
        tls.ReadTimeout = 15_000;
        using var reader = new StreamReader(tls, Encoding.ASCII);
        Assert.StartsWith("HTTP/1.1 408 ", await reader.ReadLineAsync(), StringComparison.Ordinal);
        await WaitForAsync(() => _server.BadRequests == 1, "the refusal to be counted");
    }

    [Fact]
    public async Task AFailingHandlerIs500AndLoggedAndTheServerServesOn()
    {
        using var http = _authority.Client(_server.EndPoint);
        var failed = await http.GetAsync("/fail");
        Assert.Equal(HttpStatusCode.InternalServerError, failed.StatusCode);
        Assert.Equal("{\"error\":\"internal error\"}", await failed.Content.ReadAsStringAsync());
        Assert.Equal(1, _server.Failures);
        lock (_log)
        {
            Assert.Equal("web view: GET /fail failed: handler failed", Assert.Single(_log));
        }
        Assert.Equal(HttpStatusCode.OK, (await http.GetAsync("/echo")).StatusCode);
    }

    [Fact]
    public async Task ConnectionsBeyondTheLimitAreClosedAndCounted()
    {
        using var small = Start(Limits with { MaxConnections = 1 });
        using var first = new TcpClient();
        await first.ConnectAsync(small.EndPoint);
        await Task.Delay(200);
        using var second = new TcpClient();
        await second.ConnectAsync(small.EndPoint);
        var stream = second.GetStream();
        stream.ReadTimeout = 10_000;
        Assert.Equal(0, stream.Read(new byte[16]));
        await WaitForAsync(() => small.Refused == 1, "the refused connection to be counted");
    }

    [Fact]
    public void AnAddressInUseIsOneLine()
    {
        using var second = new WebServer(_server.EndPoint, () => _authority.Certificate, _ => Task.CompletedTask);
        var e = Assert.Throws<FrontEndException>(second.Start);
        Assert.StartsWith($"web view cannot listen on {_server.EndPoint}:", e.Message, StringComparison.Ordinal);
    }

    public void Dispose()
    {
        _server.Dispose();
        _authority.Dispose();
    }

    private WebServer Start(WebServerOptions options)
    {
        var server = new WebServer(new IPEndPoint(IPAddress.Loopback, 0), () => _authority.Certificate, EchoAsync, options, line =>
        {
            lock (_log)
            {
                _log.Add(line);
            }
        });
        server.Start();
        return server;
    }

    private static async Task EchoAsync(Microsoft.AspNetCore.Http.HttpContext context)
    {
        if (context.Request.Path == "/fail")
        {
            throw new InvalidOperationException("handler failed");
        }
        using var body = new MemoryStream();
        await context.Request.Body.CopyToAsync(body);
        string text = $"{context.Request.Method} {context.Request.Path} q={context.Request.Query["q"]}{(body.Length > 0 ? " body=" + body.Length : "")}\n";
        await WebViewResponse.Text(200, text.TrimEnd('\n')).WriteAsync(context.Response, context.RequestAborted);
    }

    /// <summary>Sends bytes in the clear and returns whatever comes back before the server closes.</summary>
    private string Raw(string request)
    {
        using var client = new TcpClient();
        client.Connect(_server.EndPoint);
        var stream = client.GetStream();
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

    internal static async Task WaitForAsync(Func<bool> condition, string what)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!condition())
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(10), $"timed out waiting for {what}");
            await Task.Delay(20);
        }
    }
}
