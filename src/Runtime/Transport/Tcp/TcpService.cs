using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>
/// A node's TCP (service <see cref="WellKnownServices.Tcp"/>): connections to other servers across a switched
/// network, each a <see cref="TcpSender"/> here and a <see cref="TcpReceiver"/> there, in frames addressed to the
/// peer's coordinate. It only moves segments, keeps the timers and acknowledges every segment at once; the state
/// machines decide the rest. Connections open on their first segment (no handshake: the peers are servers of one
/// job) and ports are the NICs with carrier, one per connection by a hash of its id and peer. Connections waiting
/// for room in a port's queue take turns.
/// </summary>
public sealed class TcpService : IService
{
    // Queue slots data segments leave free on a port, so that a server that sends and receives at once can still
    // acknowledge: a dropped acknowledgement stalls the sender until a later one (or a timeout) covers it.
    private const int AckReserve = 4;

    private readonly TcpOptions _options;
    private readonly Func<Coordinate, uint, ITcpStreamSink?> _accept;
    private readonly Dictionary<uint, TcpConnection> _connections = [];
    private readonly Dictionary<ulong, TcpReceiver> _receivers = [];
    private readonly Queue<TcpConnection>[] _blocked = new Queue<TcpConnection>[Ports.Count];

    // Acknowledgements a full queue refused, per port and receiver: sent with the receiver's latest number as soon as
    // the port has room, as a stack sends a later cumulative one. Dropped, the last of a flight left its sender
    // waiting for a retransmission timeout though nothing was lost (a receiver that wakes to many segments at once,
    // such as an agg box after merging, acknowledges them all in one instant).
    private readonly Dictionary<ulong, OwedAck>[] _owed = new Dictionary<ulong, OwedAck>[Ports.Count];
    private readonly List<Port> _nics = [];
    private INodeContext _context = null!;
    private uint _nextId;

    /// <param name="options">Behaviour of every connection of this node.</param>
    /// <param name="accept">The sink for a connection a peer opens (peer, connection id), or null to ignore it.</param>
    public TcpService(TcpOptions options, Func<Coordinate, uint, ITcpStreamSink?> accept)
    {
        options.Validate();
        _options = options;
        _accept = accept;
        for (int p = 0; p < _blocked.Length; p++)
        {
            _blocked[p] = new Queue<TcpConnection>();
            _owed[p] = [];
        }
    }

    public byte Id => WellKnownServices.Tcp;

    public string Name => "tcp";

    public TcpOptions Options => _options;

    public IReadOnlyCollection<TcpConnection> Connections => _connections.Values;

    /// <summary>Acknowledgements handed to a port.</summary>
    public long AcksSent { get; private set; }

    /// <summary>Acknowledgements a full queue held back, sent when it had room (with the latest number).</summary>
    public long AcksDeferred { get; private set; }

    /// <summary>Segments that did not parse, or acknowledged no connection of this node.</summary>
    public long Malformed { get; private set; }

    /// <summary>Segments of connections the application did not accept.</summary>
    public long Refused { get; private set; }

    public void Start(INodeContext context)
    {
        _context = context;
        RefreshNics();
    }

    public void OnLinkChanged(Port port, bool up) => RefreshNics();

    /// <summary>Opens a connection to <paramref name="peer"/> that sends <paramref name="source"/>'s bytes.</summary>
    public TcpConnection Open(Coordinate peer, ITcpStreamSource source)
    {
        if (_nics.Count == 0)
        {
            throw new InvalidOperationException("no NIC is up");
        }
        uint id = ++_nextId;
        var port = _nics[(int)(Mix(id, peer) % (uint)_nics.Count)];
        ulong seed = ((ulong)(uint)_context.Torus.IndexOf(_context.Self) << 32) ^ ((ulong)(uint)_context.Torus.IndexOf(peer) << 12) ^ id;
        var connection = new TcpConnection(id, peer, port, new TcpSender(_options, source, seed));
        connection.OnTimer = () => OnTimer(connection);
        connection.OnPace = () =>
        {
            connection.PaceTimerSet = false;
            Pump(connection);
        };
        _connections.Add(id, connection);
        Pump(connection);
        return connection;
    }

    /// <summary>The connection's source has more bytes (or has ended): send what the window allows.</summary>
    public void Pump(TcpConnection connection)
    {
        if (connection.Blocked || !_connections.ContainsKey(connection.Id))
        {
            return;
        }
        var sender = connection.Sender;
        long pace = _options.PacingBitsPerSecond;
        while (sender.TryNext(out long sequence, out int length, out bool fin))
        {
            long now = _context.Now;
            if (pace > 0 && connection.NextSendAt > now)
            {
                if (!connection.PaceTimerSet)
                {
                    connection.PaceTimerSet = true;
                    _context.SetTimer(connection.NextSendAt - now, connection.OnPace!);
                }
                break;
            }
            if (!TrySendSegment(connection, sequence, length, fin))
            {
                connection.Blocked = true;
                _blocked[(int)connection.Port].Enqueue(connection);
                _context.RequestSendReady(Id, connection.Port);
                break;
            }
            sender.OnSent(sequence, length, fin, now);
            if (pace > 0)
            {
                long bits = 8L * (TcpWire.HeaderSize + length);
                connection.NextSendAt = Math.Max(connection.NextSendAt, now) + (long)Math.Ceiling(bits * 1e9 / pace);
            }
        }
        ArmTimer(connection);
    }

    public void OnSendReady(Port port)
    {
        var owed = _owed[(int)port];
        if (owed.Count > 0)
        {
            foreach (var (key, ack) in owed.ToList())
            {
                if (!_receivers.TryGetValue(key, out var receiver))
                {
                    owed.Remove(key);
                    continue;
                }
                var status = SendAck(ack.Peer, ack.Connection, receiver.Expected, ack.Timestamp, ack.Ece, port);
                if (status == SendStatus.QueueFull)
                {
                    break;
                }
                owed.Remove(key); // sent, or the link is gone and the sender's timer will tell

            }
        }
        var blocked = _blocked[(int)port];
        int turns = blocked.Count;
        while (turns-- > 0 && _context.QueueSpace(Id, port) > AckReserve)
        {
            var connection = blocked.Dequeue();
            connection.Blocked = false;
            Pump(connection);
        }
        if (blocked.Count > 0 || owed.Count > 0)
        {
            _context.RequestSendReady(Id, port);
        }
    }

    public void OnFrame(in InboundFrame frame)
    {
        var payload = frame.Payload;
        if (!TcpWire.TryRead(payload, out var segment))
        {
            Malformed++;
            return;
        }
        if (segment.IsAck)
        {
            OnAck(segment);
        }
        else
        {
            OnData(frame.Header.Source, segment, payload[TcpWire.HeaderSize..], frame.ArrivalPort);
        }
    }

    public void Stop()
    {
        foreach (var receiver in _receivers.Values)
        {
            receiver.Clear();
        }
        _receivers.Clear();
        _connections.Clear();
        foreach (var owed in _owed)
        {
            owed.Clear();
        }
    }

    private void OnAck(in TcpSegment segment)
    {
        if (!_connections.TryGetValue(segment.Connection, out var connection))
        {
            Malformed++;
            return;
        }
        var sender = connection.Sender;
        sender.OnAck(segment.Acknowledgement, (segment.Flags & TcpFlags.Ece) != 0, segment.TimestampEcho, _context.Now);
        if (sender.IsDone)
        {
            _connections.Remove(connection.Id);
            connection.Completed?.Invoke(connection);
            return;
        }
        Pump(connection);
    }

    private void OnData(Coordinate source, in TcpSegment segment, ReadOnlySpan<byte> data, Port arrival)
    {
        ulong key = ((ulong)(uint)_context.Torus.IndexOf(source) << 32) | segment.Connection;
        if (!_receivers.TryGetValue(key, out var receiver))
        {
            var sink = _accept(source, segment.Connection);
            if (sink is null)
            {
                Refused++;
                return;
            }
            receiver = new TcpReceiver(sink, _options.ReorderBufferBytes);
            _receivers.Add(key, receiver);
        }
        long ack = receiver.OnSegment(segment.Sequence, data, (segment.Flags & TcpFlags.Fin) != 0);
        var owed = _owed[(int)arrival];
        bool ece = segment.CongestionExperienced;
        if (owed.Count > 0 && owed.Remove(key, out var earlier))
        {
            ece |= earlier.Ece;
        }
        if (SendAck(source, segment.Connection, ack, segment.Timestamp, ece, arrival) == SendStatus.QueueFull)
        {
            AcksDeferred++;
            owed[key] = new OwedAck(source, segment.Connection, segment.Timestamp, ece);
            _context.RequestSendReady(Id, arrival);
        }
        // A receiver that has ended stays: its acknowledgements answer the sender's resent FIN until the sender is done.
    }

    private SendStatus SendAck(Coordinate peer, uint connection, long ack, long timestampEcho, bool ece, Port port)
    {
        var flags = TcpFlags.Ack | (ece ? TcpFlags.Ece : TcpFlags.None);
        var reply = new TcpSegment(flags, 0, connection, 0, ack, _context.Now, timestampEcho);
        Span<byte> bytes = stackalloc byte[TcpWire.HeaderSize];
        TcpWire.Write(bytes, reply);
        var header = new FrameHeader(Id, _context.Self, peer);
        var status = _context.TrySend(port, ref header, default, bytes);
        if (status == SendStatus.Queued)
        {
            AcksSent++;
        }
        return status;
    }

    private readonly record struct OwedAck(Coordinate Peer, uint Connection, long Timestamp, bool Ece);

    private bool TrySendSegment(TcpConnection connection, long sequence, int length, bool fin)
    {
        if (_context.QueueSpace(Id, connection.Port) <= AckReserve)
        {
            return false;
        }
        var frame = _context.Frames.Rent();
        int offset = FrameLayout.PayloadOffset(keyRouted: false);
        var span = frame.Buffer.AsSpan(offset, TcpWire.HeaderSize + length);
        byte ecn = _options.Dctcp ? TcpWire.EcnCapable : (byte)0;
        var segment = new TcpSegment(fin ? TcpFlags.Fin : TcpFlags.None, ecn, connection.Id, sequence, 0, _context.Now, 0);
        TcpWire.Write(span, segment);
        if (length > 0)
        {
            connection.Sender.ReadInto(sequence, span[TcpWire.HeaderSize..]);
        }
        var header = new FrameHeader(Id, _context.Self, connection.Peer);
        if (_context.TrySend(connection.Port, ref header, default, frame, TcpWire.HeaderSize + length) != SendStatus.Queued)
        {
            frame.Release();
            return false;
        }
        return true;
    }

    /// <summary>
    /// One timer per connection, re-armed lazily: a deadline that moves later leaves the timer to fire and look again;
    /// one that moves earlier (the timeout shrank after backing off) replaces it.
    /// </summary>
    private void ArmTimer(TcpConnection connection)
    {
        long deadline = connection.Sender.RtoDeadline;
        if (deadline == long.MaxValue || deadline >= connection.TimerDue)
        {
            return;
        }
        if (connection.TimerDue != long.MaxValue)
        {
            _context.CancelTimer(connection.Timer);
        }
        connection.TimerDue = deadline;
        connection.Timer = _context.SetTimer(Math.Max(0, deadline - _context.Now), connection.OnTimer!);
    }

    private void OnTimer(TcpConnection connection)
    {
        connection.TimerDue = long.MaxValue;
        if (!_connections.ContainsKey(connection.Id))
        {
            return;
        }
        var sender = connection.Sender;
        if (_context.Now >= sender.RtoDeadline)
        {
            sender.OnTimeout(_context.Now);
            if (!connection.Blocked)
            {
                Pump(connection);
            }
        }
        ArmTimer(connection);
    }

    private void RefreshNics()
    {
        _nics.Clear();
        foreach (var port in Ports.All)
        {
            if (_context.IsLinkUp(port))
            {
                _nics.Add(port);
            }
        }
    }

    private static uint Mix(uint id, Coordinate peer)
    {
        ulong h = ((ulong)id << 24) ^ (ulong)(peer.X | (peer.Y << 8) | (peer.Z << 16));
        h *= 0x9E3779B97F4A7C15UL;
        return (uint)(h >> 32);
    }
}
