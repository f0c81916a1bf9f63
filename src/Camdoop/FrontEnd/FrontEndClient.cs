using System.Buffers;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using Camdoop.FrontEnd.Wire;
using Camdoop.Runtime.Security;

namespace Camdoop.FrontEnd;

/// <summary>
/// A client of a front-end (the `camdoop put/get/ls/ping/submit/...` commands and the tests): one TCP connection,
/// mutual TLS 1.3 under the cluster CA as it opens (the client's certificate for the front-end, the front-end's node
/// certificate, naming the address dialled, for the client), then one request at a time. Every failure is a
/// <see cref="FrontEndException"/> with a one-line message: the front-end unreachable, a certificate refused either
/// way, the connection lost, or the front-end's own error reply.
/// </summary>
public sealed class FrontEndClient : IDisposable
{
    private readonly TcpClient _tcp;
    private Stream _stream;
    private long _nextId;

    private FrontEndClient(TcpClient tcp, string address)
    {
        _tcp = tcp;
        _stream = tcp.GetStream();
        Address = address;
    }

    /// <summary>"host:port" as given.</summary>
    public string Address { get; }

    /// <summary>The front-end's server, as its certificate names it (after <see cref="Connect"/>).</summary>
    public string Server { get; private set; } = "";

    /// <summary>How long to wait for any one reply before giving up.</summary>
    public TimeSpan ReplyTimeout { get; set; } = TimeSpan.FromMinutes(10);

    /// <summary>
    /// Connects to "host:port" over mutual TLS with <paramref name="credentials"/>; fails with "front-end HOST:PORT is
    /// unreachable: ..." when nobody answers, "front-end HOST:PORT refused this client: ..." when it refuses the
    /// client's certificate, and "front-end HOST:PORT is not a server of this cluster: ..." when its certificate is not
    /// one of the cluster CA's nodes for that address.
    /// </summary>
    public static FrontEndClient Connect(string address, ClusterCredentials credentials, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(credentials);
        var limit = timeout ?? TimeSpan.FromSeconds(10);
        // A front-end busy with connections that have not authenticated (a flood, idle sockets) refuses at once and
        // says so, or cuts a handshake short to make room; either is tried again, backing off, for as long as a
        // handshake may take.
        var busyFor = Stopwatch.StartNew();
        var wait = TimeSpan.FromMilliseconds(20);
        while (true)
        {
            var client = ConnectWithoutTls(address, timeout);
            try
            {
                client.Authenticate(credentials, limit);
                return client;
            }
            catch (BusyException busy)
            {
                client.Dispose();
                if (busyFor.Elapsed + wait > limit)
                {
                    throw new FrontEndException($"front-end {address} is busy: {busy.Message}");
                }
                Thread.Sleep(wait);
                wait = TimeSpan.FromTicks(Math.Min(wait.Ticks * 2, TimeSpan.FromSeconds(1).Ticks));
            }
            catch
            {
                client.Dispose();
                throw;
            }
        }
    }

    /// <summary>A refusal the front-end marked busy, or a handshake it cut short: worth trying again.</summary>
    private sealed class BusyException(string message) : Exception(message);

    /// <summary>Opens the TCP connection only: the front-end's greeting is the first thing to read (tests of admission).</summary>
    internal static FrontEndClient ConnectWithoutTls(string address, TimeSpan? timeout = null)
    {
        var (host, port) = ParseAddress(address);
        var tcp = new TcpClient { NoDelay = true };
        try
        {
            using var cts = new CancellationTokenSource(timeout ?? TimeSpan.FromSeconds(5));
            tcp.ConnectAsync(host, port, cts.Token).AsTask().GetAwaiter().GetResult();
        }
        catch (Exception e) when (e is SocketException or OperationCanceledException or IOException)
        {
            tcp.Dispose();
            string why = e is OperationCanceledException ? "no answer (timed out)" : e.Message;
            throw new FrontEndException($"front-end {address} is unreachable: {why}", e);
        }
        return new FrontEndClient(tcp, address);
    }

    /// <summary>Reads the greeting, runs TLS as the client, checks the front-end's certificate, then reads its welcome.</summary>
    private void Authenticate(ClusterCredentials credentials, TimeSpan timeout)
    {
        try
        {
            _stream.ReadTimeout = (int)timeout.TotalMilliseconds;
            _stream.WriteTimeout = (int)timeout.TotalMilliseconds;
            var greetingBody = new ReadOnlySequence<byte>(MessageFraming.Read(_stream)
                ?? throw new BusyException($"front-end {Address} closed the connection before greeting it"));
            var envelope = FrontEndWire.Decode<ReplyEnvelope>(greetingBody);
            if (!envelope.Ok)
            {
                string why = envelope.Error ?? $"front-end {Address} refused the connection";
                throw envelope.Busy ? new BusyException(why) : new FrontEndException(why);
            }
            if (FrontEndWire.Read<TlsGreeting>(greetingBody).Protocol != TlsGreeting.CurrentProtocol)
            {
                throw new FrontEndException($"front-end {Address} does not speak this client's protocol ({TlsGreeting.CurrentProtocol})");
            }
            var ssl = new SslStream(_stream, leaveInnerStreamOpen: false);
            _stream = ssl;
            var (host, _) = ParseAddress(Address);
            try
            {
                using var deadline = new CancellationTokenSource(timeout);
                ssl.AuthenticateAsClientAsync(credentials.ClientOptions(host), deadline.Token).GetAwaiter().GetResult();
            }
            catch (Exception e) when (e is IOException or OperationCanceledException)
            {
                // Cut short: most likely pushed out of a full handshake pool, which is worth another try.
                throw new BusyException($"the TLS handshake did not complete ({Inner(e)})");
            }
            catch (AuthenticationException e)
            {
                throw new FrontEndException($"front-end {Address} refused the TLS handshake: {e.Message} (credentials: {credentials.Source})", e);
            }
            var dialled = IPAddress.TryParse(host, out var ip) ? ip : (_tcp.Client.RemoteEndPoint as IPEndPoint)?.Address;
            if (credentials.CheckServer(ssl.RemoteCertificate, dialled, out var server) is { } problem)
            {
                throw new FrontEndException($"front-end {Address} is not a server of this cluster: {problem}");
            }
            var welcomeBody = new ReadOnlySequence<byte>(MessageFraming.Read(_stream)
                ?? throw new FrontEndException($"front-end {Address} closed the connection after the TLS handshake (it refused this client's certificate; credentials: {credentials.Source})"));
            var reply = FrontEndWire.Decode<ReplyEnvelope>(welcomeBody);
            if (!reply.Ok)
            {
                if (reply.Busy)
                {
                    throw new BusyException(reply.Error ?? "busy");
                }
                throw new FrontEndException($"front-end {Address} refused this client: {reply.Error} (credentials: {credentials.Source})");
            }
            Server = server!.Name;
        }
        catch (IOException e)
        {
            throw new FrontEndException($"lost the connection to front-end {Address} while authenticating: {Inner(e)}", e);
        }
        catch (InvalidDataException e)
        {
            throw new FrontEndException($"front-end {Address} sent a malformed reply while authenticating: {e.Message}", e);
        }
    }

    /// <summary>Splits "host:port" (IPv6 as "[addr]:port").</summary>
    public static (string Host, int Port) ParseAddress(string address)
    {
        ArgumentNullException.ThrowIfNull(address);
        if (IPEndPoint.TryParse(address, out var endpoint) && endpoint.Port != 0)
        {
            return (endpoint.Address.ToString(), endpoint.Port);
        }
        int colon = address.LastIndexOf(':');
        if (colon > 0 && int.TryParse(address.AsSpan(colon + 1), NumberStyles.None, CultureInfo.InvariantCulture, out int port) && port is > 0 and <= 65535)
        {
            return (address[..colon], port);
        }
        throw new FrontEndException($"front-end address '{address}' is not HOST:PORT");
    }

    /// <summary>Sends a request and returns its final reply.</summary>
    public TReply Call<TReply>(FrontEndRequest<TReply> request)
        where TReply : FrontEndReply
        => Exchange<TReply, ReplyEnvelope>(request, null);

    /// <summary>Sends a request and returns its final reply; partial replies go to <paramref name="onPart"/>.</summary>
    public TReply Call<TReply, TPart>(FrontEndRequest<TReply, TPart> request, Action<TPart>? onPart)
        where TReply : FrontEndReply
        where TPart : FrontEndReply
        => Exchange<TReply, TPart>(request, onPart);

    /// <summary>Writes raw bytes to the connection (tests: malformed and oversized messages).</summary>
    public void SendRaw(ReadOnlySpan<byte> bytes) => _stream.Write(bytes);

    /// <summary>Reads one message body as it came (tests); null when the front-end closed the connection.</summary>
    internal byte[]? ReadMessage()
    {
        _stream.ReadTimeout = (int)ReplyTimeout.TotalMilliseconds;
        return MessageFraming.Read(_stream);
    }

    /// <summary>Tells the front-end this client will send nothing more (tests: a message cut short).</summary>
    internal void CloseSending()
    {
        if (_stream is SslStream ssl)
        {
            ssl.ShutdownAsync().GetAwaiter().GetResult();
        }
        _tcp.Client.Shutdown(SocketShutdown.Send);
    }

    /// <summary>Closes the sending half of the TCP connection, below any TLS (tests).</summary>
    internal void CloseSendingPlain() => _tcp.Client.Shutdown(SocketShutdown.Send);

    /// <summary>Reads one reply's common fields (tests); null when the front-end closed the connection.</summary>
    public ReplyEnvelope? ReadReply()
    {
        _stream.ReadTimeout = (int)ReplyTimeout.TotalMilliseconds;
        return MessageFraming.Read(_stream) is { } body ? FrontEndWire.Decode<ReplyEnvelope>(new ReadOnlySequence<byte>(body)) : null;
    }

    private TReply Exchange<TReply, TPart>(FrontEndRequest request, Action<TPart>? onPart)
        where TReply : FrontEndReply
        where TPart : FrontEndReply
    {
        ArgumentNullException.ThrowIfNull(request);
        long id = ++_nextId;
        request.Id = id;
        try
        {
            _stream.WriteTimeout = (int)ReplyTimeout.TotalMilliseconds;
            _stream.Write(MessageFraming.Frame(request));
            _stream.ReadTimeout = (int)ReplyTimeout.TotalMilliseconds;
            while (true)
            {
                var body = new ReadOnlySequence<byte>(MessageFraming.Read(_stream)
                    ?? throw new FrontEndException($"front-end {Address} closed the connection without answering '{request.Op}'") { ConnectionLost = true });
                var reply = FrontEndWire.Decode<ReplyEnvelope>(body);
                if (!reply.Ok)
                {
                    throw new FrontEndException(reply.Error ?? $"front-end {Address} refused '{request.Op}'");
                }
                if (reply.Id != id)
                {
                    throw new FrontEndException($"front-end {Address} answered request {reply.Id}, expected {id}");
                }
                if (reply.More)
                {
                    if (onPart is not null && !reply.KeepAlive)
                    {
                        onPart(FrontEndWire.Read<TPart>(body));
                    }
                    continue;
                }
                return FrontEndWire.Read<TReply>(body);
            }
        }
        catch (IOException e)
        {
            throw new FrontEndException($"lost the connection to front-end {Address}: {Inner(e)}", e) { ConnectionLost = true };
        }
        catch (InvalidDataException e)
        {
            throw new FrontEndException($"front-end {Address} sent a malformed reply: {e.Message}", e);
        }
    }

    public void Dispose()
    {
        _stream.Dispose();
        _tcp.Dispose();
    }

    private static string Inner(Exception e) => e.InnerException is SocketException s ? s.Message : e.Message;

    /// <summary>Runs the TLS handshake on a connection opened with <see cref="ConnectWithoutTls"/> (tests).</summary>
    internal void AuthenticateForTest(ClusterCredentials credentials) => Authenticate(credentials, TimeSpan.FromSeconds(10));
}
