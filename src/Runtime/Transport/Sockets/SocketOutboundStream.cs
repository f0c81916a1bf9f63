using System.Buffers;
using System.Net;
using System.Net.Security;
using System.Net.Sockets;
using System.Security.Authentication;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.Runtime.Transport.Sockets;

/// <summary>
/// One stream this server opened over a kernel TCP socket. The writer fills a ring on the node's event loop; a send
/// task on the thread pool hands the committed bytes to the kernel and tells the loop when room is back. After the
/// end is sent the socket's sending half is shut down, and the stream is delivered when the peer closes its side,
/// which its reader does only after it has taken every byte.
/// </summary>
internal sealed class SocketOutboundStream : IOutboundByteStream
{
    private readonly SocketStreamTransport _transport;
    private readonly IStreamWriter _writer;
    private readonly Lock _gate = new();
    private readonly int _capacity;
    private readonly Action _onRoom;
    private byte[]? _ring;
    private Stream? _socket;
    private long _written;
    private long _sent;
    private bool _ended;
    private bool _sending;
    private bool _finished;
    private bool _writerWaiting;

    public SocketOutboundStream(SocketStreamTransport transport, Coordinate peer, IStreamWriter writer, int capacity)
    {
        _transport = transport;
        _writer = writer;
        _capacity = capacity;
        Peer = peer;
        _onRoom = OnRoom;
        _ring = ArrayPool<byte>.Shared.Rent(capacity);
        StreamMarkers.WritePreamble(_ring, transport.Self);
        _written = StreamMarkers.Size;
    }

    public Coordinate Peer { get; }

    public Span<byte> WriteSpace()
    {
        if (_ended)
        {
            throw new InvalidOperationException("the stream has ended");
        }
        long sent;
        lock (_gate)
        {
            sent = _sent;
        }
        long free = _capacity - StreamMarkers.Size - (_written - sent); // room for the trailer stays
        if (free == 0 || _ring is null)
        {
            _writerWaiting = true;
            return [];
        }
        int start = (int)(_written % _capacity);
        return _ring.AsSpan(start, (int)Math.Min(free, _capacity - start));
    }

    public void Commit(int count)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(count);
        if (count == 0)
        {
            return;
        }
        lock (_gate)
        {
            _written += count;
        }
        Kick();
    }

    public void End()
    {
        if (_ended)
        {
            return;
        }
        Span<byte> trailer = stackalloc byte[StreamMarkers.Size];
        StreamMarkers.WriteTrailer(trailer);
        lock (_gate)
        {
            // The writer never takes the last marker's worth of the ring, so the trailer always fits.
            for (int i = 0; i < trailer.Length; i++)
            {
                _ring![(int)((_written + i) % _capacity)] = trailer[i];
            }
            _written += trailer.Length;
            _ended = true;
        }
        Kick();
    }

    /// <summary>
    /// Connects (trying again while the peer refuses, up to the timeout), runs TLS as the client and checks that the
    /// peer's node certificate names the server meant and the address dialled, then sends what is written.
    /// </summary>
    public async Task ConnectAsync(IPEndPoint endPoint, TimeSpan timeout, CancellationToken cancel)
    {
        var deadline = DateTime.UtcNow + timeout;
        var delay = TimeSpan.FromMilliseconds(20);
        while (true)
        {
            var socket = new Socket(endPoint.AddressFamily, SocketType.Stream, ProtocolType.Tcp) { NoDelay = true };
            try
            {
                await socket.ConnectAsync(endPoint, cancel).ConfigureAwait(false);
            }
            catch (SocketException ex) when (DateTime.UtcNow + delay < deadline && ex.SocketErrorCode is SocketError.ConnectionRefused or SocketError.TimedOut or SocketError.NetworkUnreachable or SocketError.HostUnreachable)
            {
                socket.Dispose();
                await Task.Delay(delay, cancel).ConfigureAwait(false);
                delay = TimeSpan.FromTicks(Math.Min(delay.Ticks * 2, TimeSpan.FromSeconds(1).Ticks));
                continue;
            }
            catch (Exception ex) when (ex is SocketException or OperationCanceledException or ObjectDisposedException)
            {
                socket.Dispose();
                Fail($"cannot connect to {endPoint}: {ex.Message}");
                return;
            }
            var ssl = new SslStream(new NetworkStream(socket, ownsSocket: true), leaveInnerStreamOpen: false);
            try
            {
                var credentials = _transport.Credentials.Current;
                using var handshake = CancellationTokenSource.CreateLinkedTokenSource(cancel);
                handshake.CancelAfter(deadline - DateTime.UtcNow + TimeSpan.FromSeconds(1));
                await ssl.AuthenticateAsClientAsync(credentials.ClientOptions(endPoint.Address.ToString()), handshake.Token).ConfigureAwait(false);
                string? refused = credentials.CheckServer(ssl.RemoteCertificate, endPoint.Address, out var server);
                if (refused is null && server!.Name != Peer.Name)
                {
                    refused = $"{endPoint} answered as server {server.Name}";
                }
                if (refused is not null)
                {
                    await ssl.DisposeAsync().ConfigureAwait(false);
                    Fail($"{Peer} at {endPoint} is not who it should be: {refused}");
                    return;
                }
            }
            catch (Exception ex) when (ex is AuthenticationException or IOException or SocketException or OperationCanceledException or ObjectDisposedException)
            {
                await ssl.DisposeAsync().ConfigureAwait(false);
                Fail($"TLS with {Peer} at {endPoint} failed: {ex.Message}");
                return;
            }
            lock (_gate)
            {
                _socket = ssl;
            }
            Kick();
            return;
        }
    }

    /// <summary>Closes the socket (the transport is shutting down).</summary>
    public void Abort()
    {
        Stream? socket;
        lock (_gate)
        {
            socket = _socket;
            _finished = true;
        }
        socket?.Dispose();
    }

    /// <summary>Starts the send task if there is something to send and none is running.</summary>
    private void Kick()
    {
        lock (_gate)
        {
            if (_sending || _finished || _socket is null || (_sent == _written && !_ended))
            {
                return;
            }
            _sending = true;
        }
        _ = SendAsync();
    }

    private async Task SendAsync()
    {
        try
        {
            while (true)
            {
                Stream socket;
                ReadOnlyMemory<byte> chunk;
                lock (_gate)
                {
                    socket = _socket!;
                    if (_sent == _written)
                    {
                        _sending = false;
                        if (!_ended || _finished)
                        {
                            return;
                        }
                        _finished = true;
                        break;
                    }
                    int start = (int)(_sent % _capacity);
                    chunk = _ring.AsMemory(start, (int)Math.Min(_written - _sent, _capacity - start));
                }
                await socket.WriteAsync(chunk).ConfigureAwait(false);
                int count = chunk.Length;
                lock (_gate)
                {
                    _sent += count;
                }
                _transport.Post(_onRoom);
            }
            await FinishAsync((SslStream)_socket!).ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is SocketException or IOException or AuthenticationException or ObjectDisposedException)
        {
            lock (_gate)
            {
                _sending = false;
                _finished = true;
            }
            Fail($"sending to {Peer}: {ex.Message}");
        }
    }

    /// <summary>
    /// Every byte is with the kernel: close the sending half (TLS close_notify) and wait for the peer to close after
    /// reading them.
    /// </summary>
    private async Task FinishAsync(SslStream socket)
    {
        await socket.ShutdownAsync().ConfigureAwait(false);
        var answer = new byte[1];
        bool read = false;
        while (await socket.ReadAsync(answer).ConfigureAwait(false) > 0)
        {
            read |= answer[0] == StreamMarkers.Delivered.Span[0];
        }
        socket.Dispose();
        if (!read)
        {
            Fail($"{Peer} closed the stream without reading it to its end");
            return;
        }
        _transport.Post(() =>
        {
            ReturnRing();
            _transport.OnOutboundDone(this);
            _writer.OnDelivered(this);
        });
    }

    private void OnRoom()
    {
        if (_writerWaiting && !_ended)
        {
            _writerWaiting = false;
            _writer.OnWritable(this);
        }
    }

    private void Fail(string reason)
    {
        Abort();
        _transport.Post(() =>
        {
            ReturnRing();
            _transport.OnOutboundDone(this);
            _transport.OnFailed(Peer, reason);
        });
    }

    private void ReturnRing()
    {
        byte[]? ring;
        lock (_gate)
        {
            ring = _ring;
            _ring = null;
        }
        if (ring is not null)
        {
            ArrayPool<byte>.Shared.Return(ring);
        }
    }
}
