using System.Buffers;
using System.IO.Pipelines;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using Camdoop.FrontEnd.Wire;
using Camdoop.Runtime.Security;

namespace Camdoop.FrontEnd;

/// <summary>One client connection's conversation with the front-end; it may keep state (an upload) between requests.</summary>
public interface IFrontEndSession : IDisposable
{
    /// <summary>Serves one request; replies go through <paramref name="replies"/> (one or more, the last one final).</summary>
    Task HandleAsync(FrontEndRequest request, FrontEndReplies replies, CancellationToken cancellation);

    /// <summary>Bytes the session holds for its client between requests (an upload's chunk), counted against its limit.</summary>
    long HeldBytes => 0;

    /// <summary>Told once, before the first request: the client's address, which per-client limits count by.</summary>
    void Open(IPAddress? client)
    {
    }
}

/// <summary>Limits of the front-end's TCP server.</summary>
public sealed partial record FrontEndServerOptions
{
    public int MaxMessageBytes { get; init; } = MessageFraming.DefaultMaxMessageBytes;

    /// <summary>Authenticated connections served at once; a client that authenticates beyond them is told so and closed.</summary>
    public int MaxConnections { get; init; } = 64;

    /// <summary>
    /// Connections authenticating at once, in a pool apart from <see cref="MaxConnections"/>; when it is full, the
    /// oldest makes way for a new one.
    /// </summary>
    public int MaxHandshakes { get; init; } = 32;

    /// <summary>Places in the handshake pool one client address may hold; more from it are refused at once.</summary>
    public int MaxHandshakesPerAddress { get; init; } = 8;

    /// <summary>How long a connection in the handshake pool is safe from making way for a newer one.</summary>
    public TimeSpan HandshakeGrace { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>
    /// How long a reply may wait for the client to take it: a client that stops reading (a standing query's, a
    /// download's) is closed, and what it asked for ends with it.
    /// </summary>
    public TimeSpan WriteTimeout { get; init; } = TimeSpan.FromSeconds(30);

    /// <summary>How long an authenticated connection may wait between requests before it is closed.</summary>
    public TimeSpan IdleTimeout { get; init; } = TimeSpan.FromMinutes(10);

    /// <summary>The operations understood, and the request type each one's body is read as.</summary>
    public FrontEndOperations Operations { get; init; } = FrontEndOperations.All;

    /// <summary>How long a new connection has to authenticate: a silent client cannot hold a connection longer.</summary>
    public TimeSpan HandshakeTimeout { get; init; } = TimeSpan.FromSeconds(10);

    /// <summary>Requests a connection may have sent that the front-end received and has not answered yet (pipelined).</summary>
    public int MaxRequestsInFlight { get; init; } = 16;

    /// <summary>
    /// Bytes a connection may make the front-end hold at once: its requests received and not yet served, plus the
    /// chunk of an upload in progress (<see cref="IFrontEndSession.HeldBytes"/>). 256 MiB fits the default 64 MiB
    /// chunks with room to spare.
    /// </summary>
    public long MaxBytesInFlight { get; init; } = 256L << 20;
}

/// <summary>
/// The front-end's TCP server (the Camdoop paper, §4: any server on the switch network accepts jobs from outside the cube).
/// Each connection is read with System.IO.Pipelines: length-prefixed MessagePack messages, at most
/// <see cref="FrontEndServerOptions.MaxMessageBytes"/> each (refused on the length prefix alone), each checked by
/// <see cref="WireValidator"/> and deserialized with MessagePack-CSharp in untrusted-data mode straight from the
/// pipe's buffers. A malformed message gets an error reply and the connection carries on; a field of the wrong type
/// or an unknown operation gets an error reply naming it; an oversized message gets an error reply and the
/// connection is closed (its remaining bytes cannot be trusted). Nothing a client sends takes the server down. Runs
/// on I/O threads only: sessions reach the node's services through the event loop. Every connection is mutual TLS
/// 1.3 under the cluster CA: before any request is read the client shows a client certificate of that CA
/// (<see cref="ClusterCredentials"/>) and the front-end its node certificate; a connection that goes over its
/// requests or bytes in flight is told so and closed.
/// </summary>
public sealed partial class FrontEndServer : IDisposable
{
    private readonly CredentialsSource _credentials;
    private readonly Func<IFrontEndSession> _openSession;
    private readonly FrontEndServerOptions _options;
    private readonly Action<string> _log;
    private readonly ThrottledLog _refusals;
    private readonly CancellationTokenSource _stop = new();
    private readonly Lock _lock = new();
    private readonly HashSet<Task> _connections = [];
    private TcpListener? _listener;
    private Task? _acceptLoop;
    private int _active;
    private long _accepted;
    private long _requests;
    private long _malformed;
    private long _oversized;
    private long _truncated;
    private long _refused;
    private long _failures;
    private long _overLimit;
    private long _writeTimeouts;
    private long _idleClosed;

    public FrontEndServer(IPEndPoint endpoint, CredentialsSource credentials, Func<IFrontEndSession> openSession, FrontEndServerOptions? options = null, Action<string>? log = null)
    {
        ArgumentNullException.ThrowIfNull(endpoint);
        ArgumentNullException.ThrowIfNull(credentials);
        ArgumentNullException.ThrowIfNull(openSession);
        EndPoint = endpoint;
        _credentials = credentials;
        _openSession = openSession;
        _options = options ?? new FrontEndServerOptions();
        _log = log ?? (_ => { });
        // Refusals come at whatever rate a client without a certificate likes: one line a second, then a count.
        _refusals = new ThrottledLog(_log, TimeSpan.FromSeconds(1));
    }

    /// <summary>The requested endpoint, then (after <see cref="Start"/>) the bound one.</summary>
    public IPEndPoint EndPoint { get; private set; }

    public long ConnectionsAccepted => Interlocked.Read(ref _accepted);

    public long RequestsServed => Interlocked.Read(ref _requests);

    public long MalformedMessages => Interlocked.Read(ref _malformed);

    public long OversizedMessages => Interlocked.Read(ref _oversized);

    /// <summary>Connections the client closed with part of a message (its length prefix or body) unsent.</summary>
    public long TruncatedMessages => Interlocked.Read(ref _truncated);

    public long ConnectionsRefused => Interlocked.Read(ref _refused);

    /// <summary>Connections closed because the client did not take a reply within <see cref="FrontEndServerOptions.WriteTimeout"/>.</summary>
    public long WriteTimeouts => Interlocked.Read(ref _writeTimeouts);

    /// <summary>Connections closed after <see cref="FrontEndServerOptions.IdleTimeout"/> without a request.</summary>
    public long IdleClosed => Interlocked.Read(ref _idleClosed);

    /// <summary>Requests whose handler failed unexpectedly (answered with an error; the server carries on).</summary>
    public long HandlerFailures => Interlocked.Read(ref _failures);

    /// <summary>Connections closed because they went over their requests or bytes in flight.</summary>
    public long OverLimit => Interlocked.Read(ref _overLimit);

    /// <summary>Binds and starts accepting. Throws <see cref="FrontEndException"/> when the address cannot be bound.</summary>
    public void Start()
    {
        var listener = ListenerBinding.Start(EndPoint, "front-end");
        _listener = listener;
        EndPoint = (IPEndPoint)listener.LocalEndpoint;
        _acceptLoop = Task.Run(AcceptLoopAsync);
    }

    public void Stop()
    {
        if (_stop.IsCancellationRequested)
        {
            return;
        }
        _stop.Cancel();
        _listener?.Stop();
        Task[] running;
        lock (_lock)
        {
            running = [.. _connections];
        }
        try
        {
            Task.WaitAll([.. running, _acceptLoop ?? Task.CompletedTask], TimeSpan.FromSeconds(5));
        }
        catch (AggregateException)
        {
            // Connections end with cancellation or socket errors; both are expected at shutdown.
        }
    }

    public void Dispose()
    {
        Stop();
        _listener?.Dispose();
        _stop.Dispose();
        _refusals.Dispose();
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
            catch (OperationCanceledException)
            {
                return;
            }
            catch (ObjectDisposedException)
            {
                return;
            }
            catch (SocketException e)
            {
                _log($"front-end accept failed: {e.Message}");
                continue;
            }
            Interlocked.Increment(ref _accepted);
            socket.NoDelay = true;
            var address = (socket.RemoteEndPoint as IPEndPoint)?.Address;
            var (handshake, refusal) = Admit(address);
            if (handshake is null)
            {
                _refusals.Write($"front-end: refused a connection from {address}: {refusal}");
                _ = RefuseAsync(socket, refusal!);
                continue;
            }
            var task = Task.Run(() => ServeAsync(socket, handshake));
            lock (_lock)
            {
                _connections.Add(task);
            }
            _ = task.ContinueWith(
                t =>
                {
                    lock (_lock)
                    {
                        _connections.Remove(t);
                    }
                },
                CancellationToken.None,
                TaskContinuationOptions.ExecuteSynchronously,
                TaskScheduler.Default);
        }
    }

    private static async Task RefuseAsync(Socket socket, string why)
    {
        using var stream = new NetworkStream(socket, ownsSocket: true);
        try
        {
            using var timeout = new CancellationTokenSource(TimeSpan.FromSeconds(5));
            await stream.WriteAsync(MessageFraming.Frame(ReplyEnvelope.BusyRefusal(why)), timeout.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException)
        {
            // A client that does not read is not waited for.
        }
        catch (IOException)
        {
            // The client went away; nothing to tell it.
        }
    }

    private async Task ServeAsync(Socket socket, Handshake handshake)
    {
        var token = _stop.Token;
        var remote = socket.RemoteEndPoint?.ToString() ?? "?";
        using var plain = new NetworkStream(socket, ownsSocket: true);
        SslStream? stream = null;
        PipeReader? reader = null;
        IFrontEndSession? session = null;
        bool hasSession = false;
        try
        {
            (SslStream Stream, PeerIdentity Client)? authenticated = null;
            using (handshake)
            {
                try
                {
                    using var authenticating = CancellationTokenSource.CreateLinkedTokenSource(token, handshake.Evicted);
                    authenticated = await AuthenticateAsync(plain, new FrontEndReplies(plain, _options.WriteTimeout, () => Interlocked.Increment(ref _writeTimeouts)), remote, authenticating.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (!token.IsCancellationRequested)
                {
                    // Pushed out of the full pool by a newer connection. Its TLS handshake is cut short, so it
                    // learns nothing in words; a client tries again when its handshake fails this way.
                    Interlocked.Increment(ref _noHandshake);
                }
                finally
                {
                    Leave(handshake);
                }
            }
            if (authenticated is not { } who)
            {
                return;
            }
            stream = who.Stream;
            reader = PipeReader.Create(stream, new StreamPipeReaderOptions(bufferSize: 256 * 1024, leaveOpen: true));
            var replies = new FrontEndReplies(stream, _options.WriteTimeout, () => Interlocked.Increment(ref _writeTimeouts));
            hasSession = TryTakeSession();
            if (!hasSession)
            {
                _refusals.Write($"front-end: refused {remote} ({who.Client}) after it authenticated: {_options.MaxConnections} connections are open");
                await replies.SendRawAsync(ReplyEnvelope.BusyRefusal($"the front-end is serving its maximum of {_options.MaxConnections} connections; try again later"), token).ConfigureAwait(false);
                return;
            }
            await replies.SendRawAsync(new Welcome { Server = _credentials.Current.Identity.Name, Client = who.Client.Name }, token).ConfigureAwait(false);
            session = _openSession();
            session.Open(handshake.Address);
            // One timer for the connection, armed only while it waits for a request.
            using var idle = CancellationTokenSource.CreateLinkedTokenSource(token);
            while (!token.IsCancellationRequested)
            {
                ReadResult result;
                idle.CancelAfter(_options.IdleTimeout);
                try
                {
                    result = await reader.ReadAsync(idle.Token).ConfigureAwait(false);
                }
                catch (OperationCanceledException) when (!token.IsCancellationRequested)
                {
                    Interlocked.Increment(ref _idleClosed);
                    string idleFor = _options.IdleTimeout.TotalSeconds.ToString("0.###", System.Globalization.CultureInfo.InvariantCulture);
                    await replies.SendRawAsync(ReplyEnvelope.Failure(0, $"the front-end closed this connection: no request for {idleFor} s"), token).ConfigureAwait(false);
                    break;
                }
                idle.CancelAfter(Timeout.InfiniteTimeSpan);
                var buffer = result.Buffer;
                if (WhyOverLimit(buffer, session) is { } over)
                {
                    Interlocked.Increment(ref _overLimit);
                    _log($"front-end: {remote} {over}; closing the connection");
                    await replies.SendRawAsync(ReplyEnvelope.Failure(0, $"this connection {over}; the front-end closed it"), token).ConfigureAwait(false);
                    break;
                }
                bool close = false;
                while (!close)
                {
                    var status = MessageFraming.TryRead(ref buffer, _options.MaxMessageBytes, out var body, out long declared);
                    if (status == FrameReadStatus.Incomplete)
                    {
                        break;
                    }
                    if (status == FrameReadStatus.Oversized)
                    {
                        Interlocked.Increment(ref _oversized);
                        _log($"front-end: {remote} sent a {declared}-byte message, over the {_options.MaxMessageBytes}-byte limit; closing the connection");
                        await replies.SendRawAsync(ReplyEnvelope.Failure(0, $"message of {declared} bytes exceeds the front-end's maximum of {_options.MaxMessageBytes} bytes"), token).ConfigureAwait(false);
                        close = true;
                        break;
                    }
                    await HandleOneAsync(session, body, replies, remote, token).ConfigureAwait(false);
                }
                if (close)
                {
                    break;
                }
                reader.AdvanceTo(buffer.Start, buffer.End);
                if (result.IsCompleted)
                {
                    if (!buffer.IsEmpty)
                    {
                        Interlocked.Increment(ref _truncated);
                        _log($"front-end: {remote} closed the connection in the middle of a message ({buffer.Length} bytes of it arrived)");
                    }
                    break;
                }
            }
        }
        catch (OperationCanceledException)
        {
            // Shutting down.
        }
        catch (IOException)
        {
            // The client went away.
        }
        catch (SocketException)
        {
            // The client went away.
        }
        catch (System.Security.Authentication.AuthenticationException)
        {
            // The TLS session broke (a forged or damaged record): the connection is done.
        }
        finally
        {
            if (reader is not null)
            {
                await reader.CompleteAsync().ConfigureAwait(false);
            }
            if (stream is not null)
            {
                await stream.DisposeAsync().ConfigureAwait(false);
            }
            session?.Dispose();
            if (hasSession)
            {
                Interlocked.Decrement(ref _active);
            }
        }
    }

    /// <summary>
    /// Why a connection must be closed, or null: more complete requests waiting in <paramref name="buffer"/> than
    /// <see cref="FrontEndServerOptions.MaxRequestsInFlight"/>, or more bytes held for it than
    /// <see cref="FrontEndServerOptions.MaxBytesInFlight"/>. Walks the length prefixes only; allocates nothing.
    /// </summary>
    private string? WhyOverLimit(ReadOnlySequence<byte> buffer, IFrontEndSession session)
    {
        long held = buffer.Length + session.HeldBytes;
        if (held > _options.MaxBytesInFlight)
        {
            return $"holds {held} bytes in flight, over the front-end's limit of {_options.MaxBytesInFlight}";
        }
        int waiting = 0;
        while (MessageFraming.TryRead(ref buffer, _options.MaxMessageBytes, out _, out _) == FrameReadStatus.Complete)
        {
            if (++waiting > _options.MaxRequestsInFlight)
            {
                return $"sent more than {_options.MaxRequestsInFlight} requests without waiting for their replies (the front-end's limit)";
            }
        }
        return null;
    }

    /// <summary>
    /// Serves one message. <paramref name="body"/> lies in the pipe's buffers, which stay put until this returns; the
    /// request is deserialized from them before the handler runs (the request owns copies of its bytes).
    /// </summary>
    private async Task HandleOneAsync(IFrontEndSession session, ReadOnlySequence<byte> body, FrontEndReplies replies, string remote, CancellationToken token)
    {
        RequestEnvelope envelope;
        try
        {
            envelope = FrontEndWire.Decode<RequestEnvelope>(body);
        }
        catch (Exception e) when (e is InvalidDataException or FrontEndException)
        {
            Interlocked.Increment(ref _malformed);
            await replies.SendRawAsync(ReplyEnvelope.Failure(0, e.Message), token).ConfigureAwait(false);
            return;
        }
        replies.Begin(envelope.Id);
        Interlocked.Increment(ref _requests);
        string? op = envelope.Op;
        try
        {
            if (op is null)
            {
                throw new FrontEndException("the request has no 'op' field");
            }
            if (!_options.Operations.TryRead(op, body, out var request))
            {
                throw new FrontEndException($"unknown operation '{op}'");
            }
            await session.HandleAsync(request, replies, token).ConfigureAwait(false);
            if (!replies.Finished)
            {
                await replies.SendAsync(new ReplyEnvelope(), token).ConfigureAwait(false);
            }
        }
        catch (FrontEndException e)
        {
            if (!replies.Finished)
            {
                await replies.FailAsync(e.Message, token).ConfigureAwait(false);
            }
        }
        catch (Exception e) when (e is not OperationCanceledException and not IOException and not SocketException)
        {
            Interlocked.Increment(ref _failures);
            _log($"front-end: request '{op}' from {remote} failed: {e}");
            if (!replies.Finished)
            {
                await replies.FailAsync($"internal error serving '{op}': {e.Message}", token).ConfigureAwait(false);
            }
        }
    }
}

/// <summary>
/// The replies to the request being served on one connection. Every reply carries the request's id; a request gets
/// zero or more partial replies (<c>more</c> = true) and exactly one final reply (<c>ok</c> true or false).
/// </summary>
public sealed class FrontEndReplies
{
    private readonly Stream _stream;
    private readonly TimeSpan _writeTimeout;
    private readonly Action _timedOut;
    private long _id;

    internal FrontEndReplies(Stream stream, TimeSpan writeTimeout, Action timedOut)
    {
        _stream = stream;
        _writeTimeout = writeTimeout;
        _timedOut = timedOut;
    }

    public bool Finished { get; private set; }

    internal void Begin(long id)
    {
        _id = id;
        Finished = false;
    }

    /// <summary>Sends the final, successful reply.</summary>
    public Task SendAsync(FrontEndReply reply, CancellationToken cancellation)
    {
        ArgumentNullException.ThrowIfNull(reply);
        Finished = true;
        reply.Id = _id;
        reply.Ok = true;
        reply.More = false;
        return SendRawAsync(reply, cancellation);
    }

    /// <summary>Sends a partial reply; the request is still being served.</summary>
    public Task SendPartAsync(FrontEndReply part, CancellationToken cancellation)
    {
        ArgumentNullException.ThrowIfNull(part);
        part.Id = _id;
        part.Ok = true;
        part.More = true;
        return SendRawAsync(part, cancellation);
    }

    /// <summary>Sends a partial reply that clients skip (<see cref="ReplyEnvelope.KeepAlive"/>); fails when the client is gone.</summary>
    public Task SendKeepAliveAsync(CancellationToken cancellation) =>
        SendRawAsync(new ReplyEnvelope { Id = _id, Ok = true, More = true, KeepAlive = true }, cancellation);

    public Task FailAsync(string error, CancellationToken cancellation)
    {
        Finished = true;
        return SendRawAsync(ReplyEnvelope.Failure(_id, error), cancellation);
    }

    /// <summary>Writes one message; an <see cref="IOException"/> when the client does not take it in time (the connection is done).</summary>
    internal async Task SendRawAsync(FrontEndReply message, CancellationToken cancellation)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(cancellation);
        timeout.CancelAfter(_writeTimeout);
        try
        {
            await _stream.WriteAsync(MessageFraming.Frame(message), timeout.Token).ConfigureAwait(false);
        }
        catch (OperationCanceledException) when (!cancellation.IsCancellationRequested)
        {
            _timedOut();
            throw new IOException($"the client took no reply for {_writeTimeout.TotalSeconds:0.###} s");
        }
    }
}
