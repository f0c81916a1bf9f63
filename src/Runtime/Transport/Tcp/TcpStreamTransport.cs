using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>
/// <see cref="IStreamTransport"/> over this node's packet-level <see cref="TcpService"/>: a stream is one connection,
/// its bytes kept in a <see cref="TcpSendBuffer"/> (the socket's send buffer) until acknowledged.
/// </summary>
public sealed class TcpStreamTransport : IStreamTransport
{
    private readonly int _sendBufferBytes;
    private IStreamAcceptor? _acceptor;
    private TcpSenderTotals _finished;

    private TcpStreamTransport(TcpOptions options, int sendBufferBytes)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(sendBufferBytes, options.SegmentSize);
        _sendBufferBytes = sendBufferBytes;
        Tcp = new TcpService(options, Accept);
    }

    /// <summary>Registers a TCP service on <paramref name="host"/> and returns the streams over it.</summary>
    /// <param name="host">The node.</param>
    /// <param name="options">How its connections behave.</param>
    /// <param name="sendBufferBytes">Bytes of a stream kept until acknowledged (at least one segment).</param>
    public static TcpStreamTransport Install(NodeHost host, TcpOptions options, int sendBufferBytes)
    {
        ArgumentNullException.ThrowIfNull(host);
        ArgumentNullException.ThrowIfNull(options);
        var transport = new TcpStreamTransport(options, sendBufferBytes);
        host.Register(transport.Tcp);
        return transport;
    }

    public TcpService Tcp { get; }

    /// <summary>What the senders of every stream this node opened did, finished or not.</summary>
    public TcpSenderTotals SenderTotals
    {
        get
        {
            var totals = _finished;
            foreach (var connection in Tcp.Connections)
            {
                totals = totals.Add(connection.Sender);
            }
            return totals;
        }
    }

    public void Listen(IStreamAcceptor acceptor) => _acceptor = acceptor;

    public IOutboundByteStream Open(Coordinate peer, IStreamWriter writer)
    {
        ArgumentNullException.ThrowIfNull(writer);
        var buffer = new TcpSendBuffer(Tcp, writer, _sendBufferBytes, sender => _finished = _finished.Add(sender));
        buffer.Attach(Tcp.Open(peer, buffer));
        return buffer;
    }

    private ITcpStreamSink? Accept(Coordinate peer, uint connection) =>
        _acceptor?.Accept(peer) is { } reader ? new ReaderSink(reader) : null;

    /// <summary>A stream reader as a connection's sink (the same two calls).</summary>
    private sealed class ReaderSink(IStreamReader reader) : ITcpStreamSink
    {
        public void OnData(ReadOnlySpan<byte> data) => reader.OnData(data);

        public void OnEnd() => reader.OnEnd();
    }
}
