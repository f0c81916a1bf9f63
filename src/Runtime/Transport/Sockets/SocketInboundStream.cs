using System.Buffers;
using System.Net.Sockets;
using System.Security.Authentication;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.Runtime.Transport.Sockets;

/// <summary>
/// One stream another server opened to this one: a receive on the thread pool, then its bytes handed to the reader
/// on the node's event loop, and only then the next receive, so a slow reader holds the peer back through TCP's own
/// window rather than by buffering here. The end of the stream closes the socket, which tells the sender its bytes
/// have all been read. The last <see cref="StreamMarkers.Size"/> bytes received are held back until more come: at
/// the end they must be the trailer, or the sender stopped early.
/// </summary>
internal sealed class SocketInboundStream
{
    private readonly SocketStreamTransport _transport;
    private readonly Stream _stream;
    private readonly IStreamReader _reader;
    private readonly Action _deliver;
    private byte[]? _buffer;
    private int _received;
    private int _held;

    public SocketInboundStream(SocketStreamTransport transport, Stream stream, Coordinate peer, IStreamReader reader, int chunkBytes)
    {
        _transport = transport;
        _stream = stream;
        _reader = reader;
        Peer = peer;
        _buffer = ArrayPool<byte>.Shared.Rent(chunkBytes + StreamMarkers.Size);
        _deliver = Deliver;
    }

    public Coordinate Peer { get; }

    /// <summary>Starts receiving (on the loop, after the reader was accepted).</summary>
    public void Start() => _ = ReceiveAsync();

    public void Abort() => _stream.Dispose();

    private async Task ReceiveAsync()
    {
        try
        {
            _received = await _stream.ReadAsync(_buffer.AsMemory(_held)).ConfigureAwait(false);
            _transport.Post(_deliver);
        }
        catch (Exception ex) when (ex is SocketException or IOException or AuthenticationException or ObjectDisposedException)
        {
            _transport.Post(() =>
            {
                Close();
                _transport.OnFailed(Peer, $"receiving from {Peer}: {ex.Message}");
            });
        }
    }

    private void Deliver()
    {
        if (_buffer is null)
        {
            return;
        }
        if (_received == 0)
        {
            bool complete = StreamMarkers.IsTrailer(_buffer.AsSpan(0, _held));
            if (complete)
            {
                _reader.OnEnd();
                _ = AcknowledgeAndCloseAsync();
            }
            else
            {
                Close();
                _transport.OnFailed(Peer, $"the stream from {Peer} stopped before its end");
            }
            return;
        }
        int total = _held + _received;
        int deliver = total - StreamMarkers.Size;
        if (deliver > 0)
        {
            _reader.OnData(_buffer.AsSpan(0, deliver));
            _buffer.AsSpan(deliver, StreamMarkers.Size).CopyTo(_buffer);
            _held = StreamMarkers.Size;
        }
        else
        {
            _held = total;
        }
        Start();
    }

    /// <summary>Tells the sender every byte was read (a refused or failed stream closes without it), then closes.</summary>
    private async Task AcknowledgeAndCloseAsync()
    {
        try
        {
            await _stream.WriteAsync(StreamMarkers.Delivered).ConfigureAwait(false);
            await _stream.FlushAsync().ConfigureAwait(false);
        }
        catch (Exception ex) when (ex is SocketException or IOException or AuthenticationException or ObjectDisposedException)
        {
            // The sender is gone; it learns nothing it needs.
        }
        _transport.Post(Close);
    }

    private void Close()
    {
        _stream.Dispose();
        if (_buffer is not null)
        {
            ArrayPool<byte>.Shared.Return(_buffer);
            _buffer = null;
        }
        _transport.OnInboundDone(this);
    }
}
