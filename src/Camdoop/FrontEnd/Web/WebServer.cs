using System.Net;
using System.Net.Sockets;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd.Web;

/// <summary>Limits of the web view's HTTP server.</summary>
public sealed record WebServerOptions
{
    /// <summary>Request line and headers together, at most (431 beyond).</summary>
    public int MaxHeadBytes { get; init; } = 8 * 1024;

    /// <summary>A request body, at most (413 beyond): the login form is the only one.</summary>
    public int MaxBodyBytes { get; init; } = 4 * 1024;

    /// <summary>Connections served at once; more get 503.</summary>
    public int MaxConnections { get; init; } = 32;

    /// <summary>How long a client has to send its whole request (408 after).</summary>
    public TimeSpan RequestTimeout { get; init; } = TimeSpan.FromSeconds(10);
}

/// <summary>
/// A small HTTP/1.1 server over sockets for the web view: one request per connection (the page polls once a second,
/// so keep-alive would save little), bounded head and body sizes, a deadline for the whole request, and a cap on
/// connections. A request it cannot read is answered 400 (or 408, 413, 431) and counted; nothing a client sends
/// takes it down. Serving is left to the handler; this class only moves bytes. Runs on I/O threads only.
/// </summary>
public sealed class WebServer : IDisposable
{
    private static readonly byte[] HeadEnd = "\r\n\r\n"u8.ToArray();
    private readonly Func<HttpRequest, CancellationToken, Task<HttpResponse>> _handle;
    private readonly WebServerOptions _options;
    private readonly Action<string> _log;
    private readonly CancellationTokenSource _stop = new();
    private TcpListener? _listener;
    private Task? _acceptLoop;
    private int _active;
    private long _requests;
    private long _badRequests;
    private long _refused;
    private long _failures;

    public WebServer(IPEndPoint endpoint, Func<HttpRequest, CancellationToken, Task<HttpResponse>> handle, WebServerOptions? options = null, Action<string>? log = null)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ArgumentNullException.ThrowIfNull(handle);
        EndPoint = endpoint;
        _handle = handle;
        _options = options ?? new WebServerOptions();
        _log = log ?? (_ => { });
    }

    /// <summary>The requested endpoint, then (after <see cref="Start"/>) the bound one.</summary>
    public IPEndPoint EndPoint { get; private set; }

    /// <summary>Requests read in full and handed to the handler.</summary>
    public long Requests => Interlocked.Read(ref _requests);

    /// <summary>Requests refused unread: malformed, too large or too slow.</summary>
    public long BadRequests => Interlocked.Read(ref _badRequests);

    /// <summary>Connections refused for want of a free slot.</summary>
    public long Refused => Interlocked.Read(ref _refused);

    /// <summary>Requests whose handler failed (answered 500).</summary>
    public long Failures => Interlocked.Read(ref _failures);

    /// <summary>Binds and starts accepting; throws <see cref="FrontEndException"/> when the address cannot be bound.</summary>
    public void Start()
    {
        var listener = ListenerBinding.Start(EndPoint, "web view");
        _listener = listener;
        EndPoint = (IPEndPoint)listener.LocalEndpoint;
        _acceptLoop = Task.Run(AcceptLoopAsync);
    }

    public void Dispose()
    {
        if (!_stop.IsCancellationRequested)
        {
            _stop.Cancel();
            _listener?.Stop();
            _acceptLoop?.Wait(TimeSpan.FromSeconds(5));
        }
        _listener?.Dispose();
    }

    private async Task AcceptLoopAsync()
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket socket;
            try
            {
                socket = await _listener!.AcceptSocketAsync(_stop.Token).ConfigureAwait(false);
            }
            catch (Exception e) when (e is OperationCanceledException or ObjectDisposedException)
            {
                return;
            }
            catch (SocketException e)
            {
                _log($"web view: accept failed: {e.Message}");
                continue;
            }
            if (Interlocked.Increment(ref _active) > _options.MaxConnections)
            {
                Interlocked.Decrement(ref _active);
                Interlocked.Increment(ref _refused);
                _ = Task.Run(() => AnswerAndCloseAsync(socket, HttpResponse.Error(503, "the web view is serving its maximum of connections; try again"), _stop.Token));
                continue;
            }
            _ = Task.Run(async () =>
            {
                try
                {
                    await ServeAsync(socket).ConfigureAwait(false);
                }
                finally
                {
                    Interlocked.Decrement(ref _active);
                }
            });
        }
    }

    private async Task ServeAsync(Socket socket)
    {
        using var deadline = CancellationTokenSource.CreateLinkedTokenSource(_stop.Token);
        deadline.CancelAfter(_options.RequestTimeout);
        HttpResponse response;
        try
        {
            var (request, refusal) = await ReadRequestAsync(socket, deadline.Token).ConfigureAwait(false);
            if (request is null)
            {
                if (refusal is null)
                {
                    socket.Dispose();
                    return;
                }
                Interlocked.Increment(ref _badRequests);
                response = refusal;
            }
            else
            {
                Interlocked.Increment(ref _requests);
                try
                {
                    response = await _handle(request, _stop.Token).ConfigureAwait(false);
                }
                catch (Exception e) when (e is not OperationCanceledException)
                {
                    Interlocked.Increment(ref _failures);
                    _log($"web view: {request.Method} {request.Path} failed: {e.Message}");
                    response = HttpResponse.Error(500, "internal error");
                }
            }
        }
        catch (OperationCanceledException) when (!_stop.IsCancellationRequested)
        {
            Interlocked.Increment(ref _badRequests);
            response = HttpResponse.Error(408, $"the request did not arrive within {_options.RequestTimeout.TotalSeconds:0} s");
        }
        catch (Exception e) when (e is OperationCanceledException or SocketException or ObjectDisposedException)
        {
            socket.Dispose();
            return;
        }
        await AnswerAndCloseAsync(socket, response, _stop.Token, drain: response.Status >= 400).ConfigureAwait(false);
    }

    /// <summary>
    /// Reads one request: the head up to the blank line, then the body its Content-Length announces. Returns the
    /// request, or null with the response refusing it (null too when the client left without a word).
    /// </summary>
    private async Task<(HttpRequest? Request, HttpResponse? Refusal)> ReadRequestAsync(Socket socket, CancellationToken cancellation)
    {
        var buffer = new byte[_options.MaxHeadBytes + _options.MaxBodyBytes];
        int filled = 0;
        int headEnd;
        while ((headEnd = buffer.AsSpan(0, filled).IndexOf(HeadEnd)) < 0)
        {
            if (filled >= _options.MaxHeadBytes)
            {
                return (null, HttpResponse.Error(431, $"the request line and headers exceed {_options.MaxHeadBytes} bytes"));
            }
            int n = await socket.ReceiveAsync(buffer.AsMemory(filled, _options.MaxHeadBytes - filled), cancellation).ConfigureAwait(false);
            if (n == 0)
            {
                return (null, filled == 0 ? null : HttpResponse.Error(400, "the connection closed before the end of the request's headers"));
            }
            filled += n;
        }
        if (!HttpRequest.TryParseHead(buffer.AsSpan(0, headEnd), out var request, out string error))
        {
            return (null, HttpResponse.Error(400, error));
        }
        int length = request!.ContentLength;
        if (length > _options.MaxBodyBytes)
        {
            return (null, HttpResponse.Error(413, $"a request body may have at most {_options.MaxBodyBytes} bytes"));
        }
        int bodyStart = headEnd + HeadEnd.Length;
        int need = bodyStart + length;
        if (filled > need)
        {
            return (null, HttpResponse.Error(400, "more bytes arrived than the request's Content-Length (pipelining is not supported)"));
        }
        while (filled < need)
        {
            int n = await socket.ReceiveAsync(buffer.AsMemory(filled, need - filled), cancellation).ConfigureAwait(false);
            if (n == 0)
            {
                return (null, HttpResponse.Error(400, "the connection closed before the end of the request's body"));
            }
            filled += n;
        }
        request.Body = buffer.AsMemory(bodyStart, length);
        return (request, null);
    }

    /// <summary>
    /// Sends the response and closes. With <paramref name="drain"/> (a request refused before it was read in full)
    /// the rest of what the client sends is read and dropped for a moment first: closing on unread bytes would reset
    /// the connection, and the client might never see why it was refused.
    /// </summary>
    private static async Task AnswerAndCloseAsync(Socket socket, HttpResponse response, CancellationToken cancellation, bool drain = false)
    {
        try
        {
            await socket.SendAsync(response.Head(), cancellation).ConfigureAwait(false);
            if (!response.Body.IsEmpty)
            {
                await socket.SendAsync(response.Body, cancellation).ConfigureAwait(false);
            }
            socket.Shutdown(SocketShutdown.Send);
            if (drain)
            {
                using var linger = CancellationTokenSource.CreateLinkedTokenSource(cancellation);
                linger.CancelAfter(TimeSpan.FromSeconds(1));
                var sink = new byte[4096];
                for (int total = 0; total < 256 * 1024;)
                {
                    int n = await socket.ReceiveAsync(sink, linger.Token).ConfigureAwait(false);
                    if (n == 0)
                    {
                        break;
                    }
                    total += n;
                }
            }
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or ObjectDisposedException)
        {
            // The client went away; nothing to tell it.
        }
        finally
        {
            socket.Dispose();
        }
    }
}
