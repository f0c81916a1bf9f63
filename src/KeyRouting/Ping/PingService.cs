using System.Buffers.Binary;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

/// <summary>
/// Echo over coordinate routing, as the paper's "simple ping service" (§3): the reply carries the request's send time
/// and hop count back, so the sender learns the round-trip time from its own clock and the hops of both directions.
/// </summary>
public sealed class PingService : IService
{
    private const byte KindRequest = 1;
    private const byte KindReply = 2;
    private const int PayloadSize = 14; // kind (1) | id (4) | sent at (8) | forward hops (1)

    private readonly Dictionary<uint, Pending> _pending = [];
    private INodeContext? _context;
    private readonly KeyRoutingService _routing;
    private uint _nextId;

    /// <param name="routing">The server's key routing, over which echoes travel.</param>
    public PingService(KeyRoutingService routing)
    {
        ArgumentNullException.ThrowIfNull(routing);
        _routing = routing;
    }

    /// <summary>Registers a ping service on <paramref name="host"/>, over its key routing.</summary>
    public static PingService Install(NodeHost host)
    {
        ArgumentNullException.ThrowIfNull(host);
        var routing = host.GetService<KeyRoutingService>()
            ?? throw new InvalidOperationException("the ping service needs the key-routing service registered first");
        var service = new PingService(routing);
        host.Register(service);
        return service;
    }

    public byte Id => WellKnownServices.Ping;

    public string Name => "ping";

    public long RequestsAnswered { get; private set; }

    /// <summary>Replies that could not be sent (queue full or the requester unreachable).</summary>
    public long RepliesDropped { get; private set; }

    /// <summary>Frames that were not a ping or reply, or replies to nothing outstanding.</summary>
    public long Unexpected { get; private set; }

    public int Outstanding => _pending.Count;

    public void Start(INodeContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        _context = context;
    }

    /// <summary>
    /// Sends an echo request to <paramref name="target"/>. When the request is queued (<see cref="SendStatus.Queued"/>),
    /// <paramref name="onComplete"/> runs later on the event loop, with the reply or after <paramref name="timeoutNs"/>.
    /// </summary>
    public SendStatus Ping(Coordinate target, Action<PingResult> onComplete, long timeoutNs = 1_000_000_000)
    {
        ArgumentNullException.ThrowIfNull(onComplete);
        var context = _context ?? throw new InvalidOperationException("the ping service has not started");
        uint id = ++_nextId;
        Span<byte> payload = stackalloc byte[PayloadSize];
        Write(payload, KindRequest, id, context.Now, 0);
        var status = _routing.RouteTo(Id, target, payload, out _);
        if (status != SendStatus.Queued)
        {
            return status;
        }
        var timer = context.SetTimer(timeoutNs, () => TimedOut(id));
        _pending[id] = new Pending(target, onComplete, timer);
        return status;
    }

    public void OnFrame(in InboundFrame frame)
    {
        var context = _context!;
        var payload = frame.Payload;
        if (payload.Length < PayloadSize)
        {
            Unexpected++;
            return;
        }
        byte kind = payload[0];
        uint id = BinaryPrimitives.ReadUInt32BigEndian(payload[1..]);
        long sentAt = BinaryPrimitives.ReadInt64BigEndian(payload[5..]);
        int hops = _routing.HopsTravelled(frame);
        if (kind == KindRequest)
        {
            Span<byte> reply = stackalloc byte[PayloadSize];
            Write(reply, KindReply, id, sentAt, (byte)Math.Clamp(hops, 0, byte.MaxValue));
            if (_routing.RouteTo(Id, frame.Header.Source, reply, out _) == SendStatus.Queued)
            {
                RequestsAnswered++;
            }
            else
            {
                RepliesDropped++;
            }
            return;
        }
        if (kind != KindReply || !_pending.Remove(id, out var pending))
        {
            Unexpected++;
            return;
        }
        context.CancelTimer(pending.Timer);
        pending.OnComplete(new PingResult(pending.Target, PingOutcome.Replied, context.Now - sentAt, payload[13], hops));
    }

    private void TimedOut(uint id)
    {
        if (_pending.Remove(id, out var pending))
        {
            pending.OnComplete(new PingResult(pending.Target, PingOutcome.TimedOut, -1, -1, -1));
        }
    }

    private static void Write(Span<byte> payload, byte kind, uint id, long sentAt, byte forwardHops)
    {
        payload[0] = kind;
        BinaryPrimitives.WriteUInt32BigEndian(payload[1..], id);
        BinaryPrimitives.WriteInt64BigEndian(payload[5..], sentAt);
        payload[13] = forwardHops;
    }

    private sealed record Pending(Coordinate Target, Action<PingResult> OnComplete, TimerHandle Timer);
}
