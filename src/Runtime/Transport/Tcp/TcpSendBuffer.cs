using System.Buffers;
using Camdoop.Runtime.Transport.Streams;

namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>
/// One stream's send buffer, as a socket keeps it: a ring of the bytes written and not yet acknowledged, which the
/// connection reads its segments from. The ring is rented on the first write and returned when everything is
/// delivered, so streams waiting to start or finished hold no memory.
/// </summary>
internal sealed class TcpSendBuffer : IOutboundByteStream, ITcpStreamSource
{
    private readonly TcpService _tcp;
    private readonly IStreamWriter _writer;
    private readonly int _capacity;
    private readonly Action<TcpSender> _finished;
    private TcpConnection? _connection;
    private byte[]? _ring;
    private long _acknowledged;
    private long _written;
    private bool _ended;
    private bool _writerWaiting;
    private bool _inAck;

    /// <param name="tcp">The node's TCP, which sends the connection's segments.</param>
    /// <param name="writer">The stream's owner.</param>
    /// <param name="capacity">Bytes kept until acknowledged.</param>
    /// <param name="finished">Told the connection's sender once everything is delivered (it leaves the service then).</param>
    public TcpSendBuffer(TcpService tcp, IStreamWriter writer, int capacity, Action<TcpSender> finished)
    {
        _finished = finished;
        _tcp = tcp;
        _writer = writer;
        _capacity = capacity;
    }

    public long Available => _written;

    public bool IsComplete => _ended;

    public void Attach(TcpConnection connection)
    {
        _connection = connection;
        connection.Completed = c =>
        {
            _finished(c.Sender);
            Delivered();
        };
    }

    public Span<byte> WriteSpace()
    {
        if (_ended)
        {
            throw new InvalidOperationException("the stream has ended");
        }
        long free = _capacity - (_written - _acknowledged);
        if (free == 0)
        {
            _writerWaiting = true;
            return [];
        }
        _ring ??= ArrayPool<byte>.Shared.Rent(_capacity);
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
        _written += count;
        Pump();
    }

    public void End()
    {
        _ended = true;
        Pump();
    }

    public void Read(long offset, Span<byte> destination)
    {
        int start = (int)(offset % _capacity);
        int first = Math.Min(destination.Length, _capacity - start);
        _ring.AsSpan(start, first).CopyTo(destination);
        _ring.AsSpan(0, destination.Length - first).CopyTo(destination[first..]);
    }

    public void Acknowledged(long offset)
    {
        _acknowledged = offset;
        if (_writerWaiting && _written - _acknowledged < _capacity)
        {
            _writerWaiting = false;
            // Inside the connection's acknowledgement: the service sends what the writer adds once it returns.
            _inAck = true;
            try
            {
                _writer.OnWritable(this);
            }
            finally
            {
                _inAck = false;
            }
        }
    }

    private void Pump()
    {
        if (!_inAck && _connection is not null)
        {
            _tcp.Pump(_connection);
        }
    }

    private void Delivered()
    {
        if (_ring is not null)
        {
            ArrayPool<byte>.Shared.Return(_ring);
            _ring = null;
        }
        _writer.OnDelivered(this);
    }
}
