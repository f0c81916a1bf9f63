using System.Globalization;
using System.Net;
using System.Net.Sockets;
using Camdoop.MapReduce.FrontEnd.Wire;

namespace Camdoop.MapReduce.FrontEnd;

/// <summary>
/// A client of a front-end (the `camdoop put/get/ls/ping/submit/...` commands and the tests): one TCP connection,
/// one request at a time. Every failure is a <see cref="FrontEndException"/> with a one-line message: the front-end
/// unreachable, the connection lost, or the front-end's own error reply.
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

    /// <summary>Connects to "host:port"; fails with "front-end HOST:PORT is unreachable: ..." when nobody answers.</summary>
    public static FrontEndClient Connect(string address, TimeSpan? timeout = null)
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

    /// <summary>Sends a request and returns its final reply; partial replies go to <paramref name="onPart"/>.</summary>
    public WireMessage Call(WireMessage request, Action<WireMessage>? onPart = null)
    {
        ArgumentNullException.ThrowIfNull(request);
        long id = ++_nextId;
        request["id"] = id;
        try
        {
            _stream.WriteTimeout = (int)ReplyTimeout.TotalMilliseconds;
            _stream.Write(MessageFraming.Frame(request));
            _stream.ReadTimeout = (int)ReplyTimeout.TotalMilliseconds;
            while (true)
            {
                var reply = MessageFraming.Read(_stream)
                    ?? throw new FrontEndException($"front-end {Address} closed the connection without answering '{request.Op}'");
                if (reply["ok"] is false)
                {
                    throw new FrontEndException(reply.GetOptionalString("error") ?? $"front-end {Address} refused '{request.Op}'");
                }
                if (reply["id"] is long replyId && replyId != id)
                {
                    throw new FrontEndException($"front-end {Address} answered request {replyId}, expected {id}");
                }
                if (reply.GetBoolean("more"))
                {
                    onPart?.Invoke(reply);
                    continue;
                }
                return reply;
            }
        }
        catch (IOException e)
        {
            throw new FrontEndException($"lost the connection to front-end {Address}: {Inner(e)}", e);
        }
        catch (InvalidDataException e)
        {
            throw new FrontEndException($"front-end {Address} sent a malformed reply: {e.Message}", e);
        }
    }

    /// <summary>Writes raw bytes to the connection (tests: malformed and oversized messages).</summary>
    public void SendRaw(ReadOnlySpan<byte> bytes) => _stream.Write(bytes);

    /// <summary>Reads one message (tests).</summary>
    public WireMessage? ReadMessage()
    {
        _stream.ReadTimeout = (int)ReplyTimeout.TotalMilliseconds;
        return MessageFraming.Read(_stream);
    }

    public void Dispose()
    {
        _stream.Dispose();
        _tcp.Dispose();
    }

    private static string Inner(Exception e) => e.InnerException is SocketException s ? s.Message : e.Message;
}
