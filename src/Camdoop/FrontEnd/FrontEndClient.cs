using System.Buffers;
using System.Diagnostics;
using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Camdoop.FrontEnd.Auth;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.FrontEnd;

/// <summary>
/// A client of a front-end (the `camdoop put/get/ls/ping/submit/...` commands and the tests): one TCP connection,
/// authenticated with the cluster key as it opens (<see cref="FrontEndHandshake"/>), then one request at a time.
/// Every failure is a <see cref="FrontEndException"/> with a one-line message: the front-end unreachable, the key
/// refused, the connection lost, or the front-end's own error reply.
/// </summary>
public sealed class FrontEndClient : IDisposable
{
    private readonly TcpClient _tcp;
    private readonly NetworkStream _stream;
    private long _nextId;

    private FrontEndClient(TcpClient tcp, string address)
    {
        _tcp = tcp;
        _stream = tcp.GetStream();
        Address = address;
    }

    /// <summary>"host:port" as given.</summary>
    public string Address { get; }

    /// <summary>How long to wait for any one reply before giving up.</summary>
    public TimeSpan ReplyTimeout { get; set; } = TimeSpan.FromMinutes(10);

    /// <summary>
    /// Connects to "host:port" and authenticates both ways with <paramref name="key"/>; fails with "front-end
    /// HOST:PORT is unreachable: ..." when nobody answers, and with "front-end HOST:PORT refused this client: ..."
    /// when the key is not the cluster's.
    /// </summary>
    public static FrontEndClient Connect(string address, ClusterKey key, TimeSpan? timeout = null)
    {
        ArgumentNullException.ThrowIfNull(key);
        // A front-end busy with connections that have not authenticated (a flood, idle sockets) refuses at once and
        // says so; such a refusal is tried again, backing off, for as long as a handshake may take.
        var busyFor = Stopwatch.StartNew();
        var wait = TimeSpan.FromMilliseconds(20);
        while (true)
        {
            var client = ConnectWithoutKey(address, timeout);
            try
            {
                client.Authenticate(key, timeout ?? TimeSpan.FromSeconds(10));
                return client;
            }
            catch (BusyException busy)
            {
                client.Dispose();
                if (busyFor.Elapsed + wait > (timeout ?? TimeSpan.FromSeconds(10)))
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

    /// <summary>A refusal the front-end marked busy: worth trying again.</summary>
    private sealed class BusyException(string message) : Exception(message);

    /// <summary>Opens the TCP connection only: the front-end's challenge is the first thing to read (tests of the handshake).</summary>
    internal static FrontEndClient ConnectWithoutKey(string address, TimeSpan? timeout = null)
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

    /// <summary>Answers the front-end's challenge and checks its proof in turn.</summary>
    private void Authenticate(ClusterKey key, TimeSpan timeout)
    {
        try
        {
            _stream.ReadTimeout = (int)timeout.TotalMilliseconds;
            _stream.WriteTimeout = (int)timeout.TotalMilliseconds;
            var challengeBody = new ReadOnlySequence<byte>(MessageFraming.Read(_stream)
                ?? throw new FrontEndException($"front-end {Address} closed the connection before authenticating"));
            var envelope = FrontEndWire.Decode<ReplyEnvelope>(challengeBody);
            if (!envelope.Ok)
            {
                string why = envelope.Error ?? $"front-end {Address} refused the connection";
                throw envelope.Busy ? new BusyException(why) : new FrontEndException(why);
            }
            var challenge = FrontEndWire.Read<AuthChallenge>(challengeBody);
            if (challenge.Protocol != FrontEndHandshake.Protocol || challenge.Nonce.Length != FrontEndHandshake.NonceBytes)
            {
                throw new FrontEndException($"front-end {Address} does not speak this client's authentication ({FrontEndHandshake.Protocol})");
            }
            var serverNonce = challenge.Nonce.Span;
            var clientNonce = FrontEndHandshake.NewNonce();
            var request = new AuthRequest { Id = ++_nextId, Nonce = clientNonce, Proof = FrontEndHandshake.ClientProof(key, serverNonce, clientNonce) };
            _stream.Write(MessageFraming.Frame(request));
            var replyBody = new ReadOnlySequence<byte>(MessageFraming.Read(_stream)
                ?? throw new FrontEndException($"front-end {Address} closed the connection while authenticating"));
            var reply = FrontEndWire.Decode<ReplyEnvelope>(replyBody);
            if (!reply.Ok)
            {
                if (reply.Busy)
                {
                    throw new BusyException(reply.Error ?? "busy");
                }
                throw new FrontEndException($"front-end {Address} refused this client: {reply.Error} (key: {key.Source})");
            }
            var proof = FrontEndWire.Read<AuthReply>(replyBody).Proof.Span;
            if (!FrontEndHandshake.Matches(FrontEndHandshake.ServerProof(key, serverNonce, clientNonce), proof))
            {
                throw new FrontEndException($"front-end {Address} could not prove it holds the cluster key (key: {key.Source}): it belongs to another cluster or has another key");
            }
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
    internal void CloseSending() => _tcp.Client.Shutdown(SocketShutdown.Send);

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
                    if (onPart is not null)
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
}
