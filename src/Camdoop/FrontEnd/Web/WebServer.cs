using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;
using Camdoop.FrontEnd.Wire;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.AspNetCore.Server.Kestrel.Https;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace Camdoop.FrontEnd.Web;

/// <summary>Limits of the web view's HTTPS server (Kestrel's, set from these).</summary>
public sealed record WebServerOptions
{
    /// <summary>The request line, at most (414 beyond).</summary>
    public int MaxRequestLineBytes { get; init; } = 4 * 1024;

    /// <summary>The request's headers together, at most (431 beyond).</summary>
    public int MaxHeaderBytes { get; init; } = 8 * 1024;

    /// <summary>Headers of one request, at most (431 beyond).</summary>
    public int MaxHeaderCount { get; init; } = 32;

    /// <summary>A request body, at most (413 beyond): the login form is the only one.</summary>
    public int MaxBodyBytes { get; init; } = 4 * 1024;

    /// <summary>Connections open at once; one more is closed at once.</summary>
    public int MaxConnections { get; init; } = 32;

    /// <summary>How long a client has to complete its TLS handshake.</summary>
    public TimeSpan HandshakeTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>How long a client has to send a request's headers (408 after).</summary>
    public TimeSpan RequestHeadersTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>How long a connection may wait idle for its next request: a page polls every second.</summary>
    public TimeSpan KeepAliveTimeout { get; init; } = TimeSpan.FromSeconds(15);
}

/// <summary>
/// The web view's HTTPS server: Kestrel, HTTP/1.1 over TLS 1.3 (1.2 for a browser without it) and nothing in the
/// clear, with the server certificate <see cref="Start"/>'s provider gives for each handshake (so that a rotated
/// certificate is served without a restart). Kestrel's limits bound what a client may send and hold (head and body
/// sizes, header count, timeouts, connections); a request it cannot read it answers itself (400, 408, 413, 414, 431)
/// and this class counts. Serving is left to the handler; every response gets the page's security headers. No
/// ASP.NET Core logging reaches the console: warnings go to the node's log (<see cref="WebServerLog"/>).
/// </summary>
public sealed class WebServer : IDisposable
{
    // Everything the page needs comes from this server itself: no inline script, no other origin, no framing.
    private static readonly (string Name, string Value)[] SecurityHeaders =
    [
        ("Cache-Control", "no-store"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    ];

    /// <summary>
    /// TLS 1.3's suites, and for TLS 1.2 only the ECDHE ones with AEAD ciphers (forward secrecy, no CBC); the cluster's
    /// certificates have ECDSA keys. Set where the platform allows it (OpenSSL).
    /// </summary>
    private static readonly CipherSuitesPolicy? CipherSuites = OperatingSystem.IsLinux()
        ? new CipherSuitesPolicy(
        [
            TlsCipherSuite.TLS_AES_128_GCM_SHA256,
            TlsCipherSuite.TLS_AES_256_GCM_SHA384,
            TlsCipherSuite.TLS_CHACHA20_POLY1305_SHA256,
            TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
            TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
            TlsCipherSuite.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
        ])
        : null;

    private readonly Func<HttpContext, Task> _handle;
    private readonly Func<X509Certificate2> _certificate;
    private readonly WebServerOptions _options;
    private readonly Action<string> _log;
    private WebApplication? _app;
    private WebServerLog? _serverLog;
    private long _requests;
    private long _badRequests;
    private long _refused;
    private long _failures;
    private long _handshakeFailures;

    /// <param name="endpoint">Where to listen (port 0: any free port, <see cref="EndPoint"/> says which after <see cref="Start"/>).</param>
    /// <param name="certificate">The server certificate with its private key, asked for at every handshake.</param>
    /// <param name="handle">Serves one request.</param>
    /// <param name="options">Limits (null: the defaults).</param>
    /// <param name="log">Where the server's warnings go.</param>
    public WebServer(IPEndPoint endpoint, Func<X509Certificate2> certificate, Func<HttpContext, Task> handle, WebServerOptions? options = null, Action<string>? log = null)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ArgumentNullException.ThrowIfNull(certificate);
        ArgumentNullException.ThrowIfNull(handle);
        EndPoint = endpoint;
        _certificate = certificate;
        _handle = handle;
        _options = options ?? new WebServerOptions();
        _log = log ?? (_ => { });
    }

    /// <summary>The requested endpoint, then (after <see cref="Start"/>) the bound one.</summary>
    public IPEndPoint EndPoint { get; private set; }

    /// <summary>Requests read in full and handed to the handler.</summary>
    public long Requests => Interlocked.Read(ref _requests);

    /// <summary>Requests refused unread or half read: malformed, too large or too slow.</summary>
    public long BadRequests => Interlocked.Read(ref _badRequests);

    /// <summary>Connections closed at once for want of a free slot.</summary>
    public long Refused => Interlocked.Read(ref _refused);

    /// <summary>Requests whose handler failed (answered 500).</summary>
    public long Failures => Interlocked.Read(ref _failures);

    /// <summary>TLS handshakes that failed here: plain HTTP sent to this port, a connection dropped or too slow in its handshake.</summary>
    public long HandshakeFailures => Interlocked.Read(ref _handshakeFailures);

    /// <summary>
    /// Binds and starts serving; throws <see cref="FrontEndException"/> when the address cannot be bound or the
    /// certificate cannot serve (no private key).
    /// </summary>
    public void Start()
    {
        // Checked here so that a node without a usable certificate says so when it starts, not at the first browser.
        var first = _certificate();
        if (!first.HasPrivateKey)
        {
            throw new FrontEndException($"the web view's certificate {first.Subject} has no private key");
        }
        _serverLog = new WebServerLog(_log, Count);
        var app = Build(_serverLog);
        bool started = false;
        try
        {
            app.StartAsync().GetAwaiter().GetResult();
            started = true;
        }
        catch (Exception e) when (e is IOException or System.Net.Sockets.SocketException)
        {
            throw new FrontEndException($"web view cannot listen on {EndPoint}: {e.Message}", e);
        }
        finally
        {
            if (!started)
            {
                ((IDisposable)app).Dispose();
                _serverLog.Dispose();
            }
        }
        _app = app;
        string address = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.First();
        EndPoint = new IPEndPoint(EndPoint.Address, new Uri(address).Port);
    }

    public void Dispose()
    {
        if (_app is { } app)
        {
            _app = null;
            // Open connections (a page polling) are closed after a moment, not waited for.
            app.StopAsync(TimeSpan.FromSeconds(2)).GetAwaiter().GetResult();
            ((IDisposable)app).Dispose();
        }
        _serverLog?.Dispose();
    }

    private WebApplication Build(WebServerLog serverLog)
    {
        // The empty builder reads no configuration (files, environment variables, arguments): nothing outside the
        // node's config changes what this server does.
        var builder = WebApplication.CreateEmptyBuilder(new WebApplicationOptions { EnvironmentName = Environments.Production, ApplicationName = "camdoop-web-view" });
        // The node handles SIGTERM and Ctrl+C itself: the host's console lifetime must not take them.
        builder.Services.AddSingleton<IHostLifetime, NodeOwnedLifetime>();
        builder.Logging.ClearProviders();
        builder.Logging.AddProvider(serverLog);
        builder.Logging.SetMinimumLevel(LogLevel.Trace);
        builder.WebHost.UseKestrelCore();
        builder.WebHost.ConfigureKestrel(kestrel =>
        {
            kestrel.AddServerHeader = false;
            var limits = kestrel.Limits;
            limits.MaxRequestLineSize = _options.MaxRequestLineBytes;
            limits.MaxRequestHeadersTotalSize = _options.MaxHeaderBytes;
            limits.MaxRequestHeaderCount = _options.MaxHeaderCount;
            limits.MaxRequestBodySize = _options.MaxBodyBytes;
            limits.MaxRequestBufferSize = _options.MaxHeaderBytes + _options.MaxRequestLineBytes + _options.MaxBodyBytes;
            limits.MaxConcurrentConnections = _options.MaxConnections;
            limits.MaxConcurrentUpgradedConnections = 0;
            limits.RequestHeadersTimeout = _options.RequestHeadersTimeout;
            limits.KeepAliveTimeout = _options.KeepAliveTimeout;
            kestrel.Listen(EndPoint, listen =>
            {
                // HTTP/1.1 only: the page makes a request or two a second, for which multiplexing buys nothing.
                listen.Protocols = HttpProtocols.Http1;
                listen.UseHttps(HttpsOptions());
            });
        });
        var app = builder.Build();
        app.Run(ServeAsync);
        return app;
    }

    private HttpsConnectionAdapterOptions HttpsOptions() => new()
    {
        ServerCertificateSelector = (_, _) => _certificate(),
        SslProtocols = SslProtocols.Tls13 | SslProtocols.Tls12,
        ClientCertificateMode = ClientCertificateMode.NoCertificate,
        HandshakeTimeout = _options.HandshakeTimeout,
        CheckCertificateRevocation = false,
        OnAuthenticate = (_, ssl) =>
        {
            if (OperatingSystem.IsLinux())
            {
                ssl.CipherSuitesPolicy = CipherSuites;
            }
        },
    };

    private async Task ServeAsync(HttpContext context)
    {
        Interlocked.Increment(ref _requests);
        var response = context.Response;
        foreach (var (name, value) in SecurityHeaders)
        {
            response.Headers[name] = value;
        }
        try
        {
            await _handle(context).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (context.RequestAborted.IsCancellationRequested)
        {
            // The client went away; nothing to answer.
        }
        catch (Microsoft.AspNetCore.Http.BadHttpRequestException e)
        {
            // A body over the limit, or one too slow, found while the handler read it (Kestrel logs it: counted there).
            await AnswerIfPossibleAsync(context, WebViewResponse.Error(e.StatusCode, e.Message)).ConfigureAwait(false);
        }
        // a failing handler is answered 500 and logged; the server serves on
        catch (Exception e)
        {
            Interlocked.Increment(ref _failures);
            _serverLog?.Write($"{context.Request.Method} {context.Request.Path.Value} failed: {e.Message}");
            await AnswerIfPossibleAsync(context, WebViewResponse.Error(500, "internal error")).ConfigureAwait(false);
        }
    }

    private static Task AnswerIfPossibleAsync(HttpContext context, WebViewResponse answer)
    {
        if (context.Response.HasStarted)
        {
            context.Abort();
            return Task.CompletedTask;
        }
        context.Response.Headers.Remove("Set-Cookie");
        context.Response.Headers.Remove("Location");
        return answer.WriteAsync(context.Response, context.RequestAborted);
    }

    private void Count(WebServerEvent counted)
    {
        switch (counted)
        {
            case WebServerEvent.BadRequest:
                Interlocked.Increment(ref _badRequests);
                break;
            case WebServerEvent.ConnectionRefused:
                Interlocked.Increment(ref _refused);
                break;
            case WebServerEvent.HandshakeFailed:
                Interlocked.Increment(ref _handshakeFailures);
                break;
        }
    }

    /// <summary>A host lifetime that waits for nothing and listens to no signal: the node starts and stops this server.</summary>
    private sealed class NodeOwnedLifetime : IHostLifetime
    {
        public Task WaitForStartAsync(CancellationToken cancellationToken) => Task.CompletedTask;

        public Task StopAsync(CancellationToken cancellationToken) => Task.CompletedTask;
    }
}
