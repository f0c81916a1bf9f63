using System.Runtime.CompilerServices;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

/// <summary>
/// CamCube's key-based routing (the Camdoop paper, §3): maps keys to servers under failures, keeps a link-state view of the
/// torus, and forwards key-routed and coordinate-routed frames hop by hop over shortest live paths. It is the node's
/// <see cref="IKeyRouter"/>, so it sees every routed frame at every hop and re-resolves the key's owner with its
/// current view there (ownership may have moved while the frame travelled). Other services on the node reach it with
/// <c>context.GetService&lt;KeyRoutingService&gt;()</c>.
/// </summary>
public sealed partial class KeyRoutingService : IService, IKeyRouter
{
    private const ulong Golden = 0x9E37_79B9_7F4A_7C15UL;

    private readonly KeyRoutingOptions _options;
    private INodeContext? _context;
    private Torus _torus = null!;
    private KeyMapper _mapper = null!;
    private RouteTable _table = null!;
    private int _self;
    private ulong _selfSalt;
    private byte _initialTtl;

    public KeyRoutingService(KeyRoutingOptions? options = null)
    {
        _options = options ?? new KeyRoutingOptions();
    }

    /// <summary>Registers a routing service on <paramref name="host"/> and makes it the node's key router.</summary>
    public static KeyRoutingService Install(NodeHost host, KeyRoutingOptions? options = null)
    {
        ArgumentNullException.ThrowIfNull(host);
        var service = new KeyRoutingService(options);
        host.Register(service);
        host.SetKeyRouter(service);
        return service;
    }

    public byte Id => WellKnownServices.KeyRouting;

    public string Name => "key-routing";

    public KeyRoutingCounters Counters { get; } = new();

    public KeyRoutingOptions Options => _options;

    /// <summary>The TTL routed frames start with; hops travelled = InitialTtl - TTL on arrival.</summary>
    public byte InitialTtl => _initialTtl;

    public KeyMapper Mapper => _mapper;

    /// <summary>The TTL routed frames start with on <paramref name="torus"/>: room for twice the diameter, at least the default.</summary>
    public static byte InitialTtlFor(Torus torus)
    {
        ArgumentNullException.ThrowIfNull(torus);
        return (byte)Math.Clamp(2 * torus.Diameter, FrameLayout.DefaultTtl, byte.MaxValue);
    }

    /// <summary>Links a delivered routed frame crossed (0 for a local delivery): every link crossed costs one TTL.</summary>
    public int HopsTravelled(in InboundFrame frame) => _initialTtl - frame.Header.Ttl;

    public void Start(INodeContext context)
    {
        ArgumentNullException.ThrowIfNull(context);
        _context = context;
        _torus = context.Torus;
        _mapper = KeyMapper.Shared(_torus);
        _self = _torus.IndexOf(context.Self);
        _selfSalt = (ulong)(_self + 1) * Golden;
        _initialTtl = InitialTtlFor(_torus);
        StartLinkState();
    }

    public void Stop() => StopLinkState();

    /// <summary>The server that owns <paramref name="key"/> in this server's current view.</summary>
    public Coordinate Owner(in Key key) => _torus.CoordinateOf(OwnerIndex(key));

    /// <summary>As <see cref="Owner"/>, as a server index.</summary>
    public int OwnerIndex(in Key key)
    {
        EnsureFresh();
        // This server is always reachable from itself, so there is always an owner.
        return _mapper.OwnerIndex(key, _table.Reachable);
    }

    /// <summary>Whether a path of live links leads from this server to <paramref name="server"/>.</summary>
    public bool IsReachable(Coordinate server)
    {
        EnsureFresh();
        return _torus.Contains(server) && _table.Reachable.Contains(_torus.IndexOf(server));
    }

    /// <summary>Hops over live links to <paramref name="server"/>, or -1 when it is unreachable.</summary>
    public int Distance(Coordinate server)
    {
        EnsureFresh();
        return _torus.Contains(server) ? _table.Distance(_torus.IndexOf(server)) : -1;
    }

    /// <summary>Servers reachable from here, this one included.</summary>
    public int ReachableCount
    {
        get
        {
            EnsureFresh();
            return _table.Reachable.Count;
        }
    }

    /// <summary>The ports that start a shortest live path to <paramref name="server"/> (bit p for port p).</summary>
    public byte NextHopPorts(Coordinate server)
    {
        EnsureFresh();
        return _table.NextHopPorts(_torus.IndexOf(server));
    }

    /// <summary>
    /// Sends <paramref name="payload"/> to the current owner of <paramref name="key"/> as a key-routed frame of service
    /// <paramref name="serviceId"/>, over a shortest live path; when this server owns the key, delivers it here.
    /// On <see cref="SendStatus.QueueFull"/>, <paramref name="port"/> names the full queue: wait for OnSendReady(port).
    /// </summary>
    public SendStatus Route(byte serviceId, in Key key, ReadOnlySpan<byte> payload, out Port port) =>
        Route(serviceId, key, payload, preferred: null, out port);

    /// <summary>
    /// As <see cref="Route(byte, in Key, ReadOnlySpan{byte}, Port?, out Port)"/> for a small control frame marked
    /// <see cref="FrameFlags.Urgent"/>: every server that forwards it queues it ahead of the service's transit data and
    /// keeps room for it when that is full (an ack or a restart request crossing the congestion a failure left).
    /// </summary>
    public SendStatus RouteUrgent(byte serviceId, in Key key, ReadOnlySpan<byte> payload, Port? preferred, out Port port)
    {
        Span<byte> keyBytes = stackalloc byte[Key.Size];
        var header = KeyRoutedHeader(serviceId, key, keyBytes, out int owner);
        header.Flags |= FrameFlags.Urgent;
        return Send(Context, owner, KeyFlow(_self, key, serviceId), ref header, keyBytes, payload, preferred, out port);
    }

    /// <summary>
    /// As <see cref="Route(byte, in Key, ReadOnlySpan{byte}, out Port)"/>, leaving on <paramref name="preferred"/> when
    /// that port starts a shortest live path to the key's owner. A service that spreads its traffic over links on
    /// purpose (Camdoop's link-disjoint trees) keeps its choice where two ports reach the same neighbour (a ring of two).
    /// </summary>
    public SendStatus Route(byte serviceId, in Key key, ReadOnlySpan<byte> payload, Port? preferred, out Port port)
    {
        Span<byte> keyBytes = stackalloc byte[Key.Size];
        var header = KeyRoutedHeader(serviceId, key, keyBytes, out int owner);
        return Send(Context, owner, KeyFlow(_self, key, serviceId), ref header, keyBytes, payload, preferred, out port);
    }

    /// <summary>
    /// As <see cref="Route(byte, in Key, ReadOnlySpan{byte}, Port?, out Port)"/> for a payload of
    /// <paramref name="payloadLength"/> bytes already written into <paramref name="frame"/> (rented from the node's
    /// frame pool) at <c>FrameLayout.PayloadOffset(keyRouted: true)</c>, so that it is not copied again. When
    /// queued (or delivered here), the frame is no longer the caller's; otherwise the caller still owns it.
    /// </summary>
    public SendStatus Route(byte serviceId, in Key key, Frame frame, int payloadLength, Port? preferred, out Port port)
    {
        ArgumentNullException.ThrowIfNull(frame);
        var context = Context;
        Span<byte> keyBytes = stackalloc byte[Key.Size];
        var header = KeyRoutedHeader(serviceId, key, keyBytes, out int owner);
        ulong flow = KeyFlow(_self, key, serviceId);
        if (owner == _self)
        {
            var delivered = Send(context, owner, flow, ref header, keyBytes,
                frame.Buffer.AsSpan(FrameLayout.PayloadOffset(keyRouted: true), payloadLength), preferred, out port);
            frame.Release();
            return delivered;
        }
        return TryOriginate(owner, flow, preferred, ref header, out port)
            ? CountOriginated(context.TrySend(port, ref header, keyBytes, frame, payloadLength))
            : SendStatus.Unreachable;
    }

    /// <summary>
    /// Sends <paramref name="payload"/> to service <paramref name="serviceId"/> on <paramref name="destination"/> as a
    /// coordinate-routed frame over a shortest live path. Returns <see cref="SendStatus.Unreachable"/> when no live
    /// path leads there; delivers locally when the destination is this server.
    /// </summary>
    public SendStatus RouteTo(byte serviceId, Coordinate destination, ReadOnlySpan<byte> payload, out Port port)
    {
        var context = Context;
        if (!_torus.Contains(destination))
        {
            throw new ArgumentOutOfRangeException(nameof(destination), destination, $"not a server of the {_torus} torus");
        }
        EnsureFresh();
        int target = _torus.IndexOf(destination);
        var header = new FrameHeader(serviceId, context.Self, destination, FrameFlags.CoordinateRouted, _initialTtl);
        return Send(context, target, CoordinateFlow(_self, target, serviceId), ref header, default, payload, preferred: null, out port);
    }

    /// <summary>Every routed frame passes here at every hop, the first one and the last one included.</summary>
    public void OnKeyRoutedFrame(in InboundFrame frame)
    {
        var context = Context;
        EnsureFresh();
        var header = frame.Header;
        int source = _torus.IndexOf(header.Source);
        int target;
        ulong flow;
        if (header.IsKeyRouted)
        {
            var key = Key.Read(frame.Key);
            target = _mapper.OwnerIndex(key, _table.Reachable);
            flow = KeyFlow(source, key, header.ServiceId);
        }
        else
        {
            target = _torus.IndexOf(header.Destination);
            flow = CoordinateFlow(source, target, header.ServiceId);
        }
        if (target == _self)
        {
            Counters.Delivered++;
            context.Deliver(frame);
            return;
        }
        if (!_table.TryNextHop(target, PerHop(flow), out var port))
        {
            Counters.DroppedNoRoute++;
            return;
        }
        switch (context.TryForward(frame, port))
        {
            case SendStatus.Queued:
                Counters.Forwarded++;
                break;
            case SendStatus.TtlExpired:
                Counters.DroppedTtl++;
                break;
            default:
                Counters.DroppedForward++;
                break;
        }
    }

    private SendStatus Send(INodeContext context, int target, ulong flow, ref FrameHeader header, ReadOnlySpan<byte> key, ReadOnlySpan<byte> payload,
        Port? preferred, out Port port)
    {
        if (target == _self)
        {
            port = default;
            context.DeliverLocal(ref header, key, payload);
            Counters.Originated++;
            return SendStatus.Queued;
        }
        return TryOriginate(target, flow, preferred, ref header, out port)
            ? CountOriginated(context.TrySend(port, ref header, key, payload))
            : SendStatus.Unreachable;
    }

    /// <summary>The first hop of a frame this server originates to <paramref name="target"/>, and the TTL it leaves with.</summary>
    private bool TryOriginate(int target, ulong flow, Port? preferred, ref FrameHeader header, out Port port)
    {
        if (!TryFirstHop(target, flow, preferred, out port))
        {
            return false;
        }
        // Forwarding takes one off the TTL per link crossed; the first link is crossed here.
        header.Ttl = (byte)(_initialTtl - 1);
        return true;
    }

    private SendStatus CountOriginated(SendStatus status)
    {
        if (status == SendStatus.Queued)
        {
            Counters.Originated++;
        }
        return status;
    }

    /// <summary>The header of a key-routed frame to <paramref name="key"/>'s current owner; writes the key into <paramref name="keyBytes"/>.</summary>
    private FrameHeader KeyRoutedHeader(byte serviceId, in Key key, Span<byte> keyBytes, out int owner)
    {
        owner = OwnerIndex(key);
        key.Write(keyBytes);
        return new FrameHeader(serviceId, Context.Self, _torus.CoordinateOf(owner), FrameFlags.KeyRouted, _initialTtl);
    }

    /// <summary>The port a frame to <paramref name="target"/> leaves on: <paramref name="preferred"/> when it starts a shortest live path.</summary>
    private bool TryFirstHop(int target, ulong flow, Port? preferred, out Port port)
    {
        if (preferred is { } p && (_table.NextHopPorts(target) & (1 << (int)p)) != 0)
        {
            port = p;
            return true;
        }
        if (_table.TryNextHop(target, PerHop(flow), out port))
        {
            return true;
        }
        Counters.DroppedNoRoute++;
        return false;
    }

    private INodeContext Context => _context ?? throw new InvalidOperationException("the key-routing service has not started");

    // A flow is (source, service, destination key or coordinate): the same at every hop, so its path is stable.
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong KeyFlow(int source, in Key key, byte serviceId) =>
        KeyMapper.Mix(key.High ^ KeyMapper.Mix(key.Middle ^ key.Low ^ ((ulong)(uint)source << 32) ^ ((ulong)serviceId << 24)));

    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private static ulong CoordinateFlow(int source, int target, byte serviceId) =>
        KeyMapper.Mix(((ulong)(uint)source << 32) ^ (uint)target ^ ((ulong)serviceId << 24) ^ Golden);

    /// <summary>Each hop mixes in its own index so that the choices of successive hops are independent.</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    private ulong PerHop(ulong flow) => KeyMapper.Mix(flow ^ _selfSalt);
}
