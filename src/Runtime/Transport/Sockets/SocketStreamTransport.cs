using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using Camdoop.Runtime.Security;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.Runtime.Transport.Sockets;

/// <summary>
/// <see cref="IStreamTransport"/> over the kernel's TCP: a real server's streams, where the simulator has its
/// packet-level TCP. Sockets are driven by tasks on the thread pool, as link drivers have their I/O threads, and
/// every call into the application (accept, data, end, room, delivered) is posted to the node's event loop, so the
/// application stays single-threaded. A peer is named by its coordinate; where it listens comes from
/// <c>addressOf</c>. Every stream is mutual TLS 1.3 under the cluster CA: both ends show node certificates, and the
/// coordinate a stream's preamble names must be the one its opener's certificate names, so nothing but a server of
/// the cube can open a stream, or open one as another server.
/// </summary>
public sealed class SocketStreamTransport : IStreamTransport, IDisposable
{
    private readonly Torus _torus;
    private readonly IPEndPoint _listenAt;
    private readonly Func<Coordinate, IPEndPoint> _addressOf;
    private readonly Action<Action> _post;
    private readonly SocketStreamOptions _options;
    private readonly CredentialsSource _credentials;
    private readonly CancellationTokenSource _stop = new();
    private readonly HashSet<SocketOutboundStream> _outbound = [];
    private readonly HashSet<SocketInboundStream> _inbound = [];
    private readonly Lock _gate = new();
    private IStreamAcceptor? _acceptor;
    private Socket? _listener;
    private long _rejected;
    private long _failed;
    private long _unauthenticated;

    /// <param name="self">This server.</param>
    /// <param name="torus">The servers (a preamble naming another is rejected).</param>
    /// <param name="listenAt">Where this server accepts streams.</param>
    /// <param name="addressOf">Where a peer accepts streams.</param>
    /// <param name="post">Runs an action on the node's event loop (thread-safe).</param>
    /// <param name="credentials">This server's node certificate and the cluster CA.</param>
    /// <param name="options">Buffer sizes and timeouts.</param>
    public SocketStreamTransport(Coordinate self, Torus torus, IPEndPoint listenAt, Func<Coordinate, IPEndPoint> addressOf, Action<Action> post, CredentialsSource credentials, SocketStreamOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(credentials);
        ArgumentNullException.ThrowIfNull(torus);
        ArgumentNullException.ThrowIfNull(listenAt);
        ArgumentNullException.ThrowIfNull(addressOf);
        ArgumentNullException.ThrowIfNull(post);
        if (!torus.Contains(self))
        {
            throw new ArgumentOutOfRangeException(nameof(self), self, $"not a server of {torus}");
        }
        _options = options ?? new SocketStreamOptions();
        _options.Validate();
        Self = self;
        _torus = torus;
        _listenAt = listenAt;
        _addressOf = addressOf;
        _post = post;
        _credentials = credentials;
    }

    public Coordinate Self { get; }

    /// <summary>Where this server listens (its port is the one bound, if 0 was asked for), once listening.</summary>
    public IPEndPoint? LocalEndPoint => _listener?.LocalEndPoint as IPEndPoint;

    /// <summary>Connections dropped before they became streams: no preamble in time, a bad one, or refused by the acceptor.</summary>
    public long ConnectionsRejected => Interlocked.Read(ref _rejected);

    /// <summary>
    /// Connections refused for who opened them: no TLS, no certificate, another CA's, expired, revoked, a client's, or
    /// a preamble naming another server than the certificate (counted in <see cref="ConnectionsRejected"/> too).
    /// </summary>
    public long ConnectionsUnauthenticated => Interlocked.Read(ref _unauthenticated);

    /// <summary>The credentials streams are opened and accepted with.</summary>
    internal CredentialsSource Credentials => _credentials;

    /// <summary>Streams that failed: a peer that never answered, a reset, a sender that stopped before its end.</summary>
    public long StreamsFailed => Interlocked.Read(ref _failed);

    /// <summary>Raised on the event loop when a stream fails (the peer and why); its reader or writer hears nothing more.</summary>
    public event Action<Coordinate, string>? StreamFailed;

    public void Listen(IStreamAcceptor acceptor)
    {
        ArgumentNullException.ThrowIfNull(acceptor);
        _acceptor = acceptor;
        if (_listener is not null)
        {
            return;
        }
        var listener = new Socket(_listenAt.AddressFamily, SocketType.Stream, ProtocolType.Tcp);
        listener.SetSocketOption(SocketOptionLevel.Socket, SocketOptionName.ReuseAddress, true);
        listener.Bind(_listenAt);
        listener.Listen(1024);
        _listener = listener;
        _ = AcceptLoopAsync(listener);
    }

    public IOutboundByteStream Open(Coordinate peer, IStreamWriter writer)
    {
        ArgumentNullException.ThrowIfNull(writer);
        if (!_torus.Contains(peer))
        {
            throw new ArgumentOutOfRangeException(nameof(peer), peer, $"not a server of {_torus}");
        }
        var stream = new SocketOutboundStream(this, peer, writer, _options.SendBufferBytes);
        lock (_gate)
        {
            _outbound.Add(stream);
        }
        _ = stream.ConnectAsync(_addressOf(peer), _options.ConnectTimeout, _stop.Token);
        return stream;
    }

    public void Dispose()
    {
        _stop.Cancel();
        _listener?.Dispose();
        SocketOutboundStream[] outbound;
        SocketInboundStream[] inbound;
        lock (_gate)
        {
            outbound = [.. _outbound];
            inbound = [.. _inbound];
        }
        foreach (var s in outbound)
        {
            s.Abort();
        }
        foreach (var s in inbound)
        {
            s.Abort();
        }
        _stop.Dispose();
    }

    internal void Post(Action action)
    {
        try
        {
            _post(action);
        }
        catch (InvalidOperationException)
        {
            // The node has stopped: nothing is left to tell.
        }
    }

    internal void OnFailed(Coordinate peer, string reason)
    {
        Interlocked.Increment(ref _failed);
        StreamFailed?.Invoke(peer, reason);
    }

    internal void OnOutboundDone(SocketOutboundStream stream)
    {
        lock (_gate)
        {
            _outbound.Remove(stream);
        }
    }

    internal void OnInboundDone(SocketInboundStream stream)
    {
        lock (_gate)
        {
            _inbound.Remove(stream);
        }
    }

    private async Task AcceptLoopAsync(Socket listener)
    {
        while (!_stop.IsCancellationRequested)
        {
            Socket socket;
            try
            {
                socket = await listener.AcceptAsync(_stop.Token).ConfigureAwait(false);
            }
            catch (Exception ex) when (ex is SocketException or ObjectDisposedException or OperationCanceledException)
            {
                return;
            }
            socket.NoDelay = true;
            _ = HandshakeAsync(socket);
        }
    }

    /// <summary>
    /// Runs TLS as the server, checks the opener's node certificate, reads the preamble (which must name the same
    /// server), then offers the stream to the acceptor on the loop.
    /// </summary>
    private async Task HandshakeAsync(Socket socket)
    {
        var ssl = new SslStream(new NetworkStream(socket, ownsSocket: true), leaveInnerStreamOpen: false);
        var preamble = new byte[StreamMarkers.Size];
        Coordinate? peer = null;
        try
        {
            using var timeout = CancellationTokenSource.CreateLinkedTokenSource(_stop.Token);
            timeout.CancelAfter(_options.PreambleTimeout);
            var credentials = _credentials.Current;
            await ssl.AuthenticateAsServerAsync(credentials.ServerOptions(), timeout.Token).ConfigureAwait(false);
            if (credentials.WhyRefused(ssl.RemoteCertificate, CertificateRole.Node, out var opener) is not null)
            {
                Interlocked.Increment(ref _unauthenticated);
            }
            else
            {
                int read = 0;
                while (read < preamble.Length)
                {
                    int n = await ssl.ReadAsync(preamble.AsMemory(read), timeout.Token).ConfigureAwait(false);
                    if (n == 0)
                    {
                        break;
                    }
                    read += n;
                }
                if (read == preamble.Length)
                {
                    peer = StreamMarkers.TryReadPreamble(preamble, _torus);
                    if (peer is { } named && named.Name != opener!.Name)
                    {
                        Interlocked.Increment(ref _unauthenticated);
                        peer = null;
                    }
                }
            }
        }
        catch (AuthenticationException)
        {
            Interlocked.Increment(ref _unauthenticated);
        }
        catch (Exception ex) when (ex is SocketException or IOException or ObjectDisposedException or OperationCanceledException)
        {
        }
        if (peer is not { } from)
        {
            Interlocked.Increment(ref _rejected);
            await ssl.DisposeAsync().ConfigureAwait(false);
            return;
        }
        Post(() =>
        {
            var reader = _acceptor?.Accept(from);
            if (reader is null)
            {
                Interlocked.Increment(ref _rejected);
                ssl.Dispose();
                return;
            }
            var stream = new SocketInboundStream(this, ssl, from, reader, _options.ReceiveChunkBytes);
            lock (_gate)
            {
                _inbound.Add(stream);
            }
            stream.Start();
        });
    }
}
