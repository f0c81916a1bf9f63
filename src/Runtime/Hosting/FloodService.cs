using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Hosting;

/// <summary>
/// A measurement service: while flooding, keeps its queue on one port full of maximum-size frames to the neighbour,
/// each stamped with a sequence number (an i64, big-endian, at payload offset 0); counts what it receives and the
/// gaps in the neighbour's sequence (frames lost on the way). With a rate set it paces itself with a token bucket refilled every millisecond, so a probe can
/// measure the CPU cost of a given frame rate rather than of flat-out flooding. Only for probes and benchmarks.
/// </summary>
public sealed class FloodService : IService
{
    public const byte DefaultId = 250;

    private readonly Port _port;
    private readonly byte[] _payload;
    private INodeContext? _context;
    private long _nextSequence;
    private long _expected;
    private double _framesPerNs;
    private double _tokens;
    private double _burst;
    private long _refilledAt;
    private Action? _tick;
    private bool _tickScheduled;

    public FloodService(Port port, int payloadSize = FrameLayout.MaxPayload, byte id = DefaultId)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(payloadSize, sizeof(long));
        ArgumentOutOfRangeException.ThrowIfGreaterThan(payloadSize, FrameLayout.MaxPayload);
        _port = port;
        _payload = new byte[payloadSize];
        Id = id;
    }

    public byte Id { get; }

    public string Name => "flood";

    public bool Flooding { get; private set; }

    public long FramesQueued { get; private set; }

    public long FramesReceived { get; private set; }

    /// <summary>Received frame bytes, Ethernet header included (what the link carried).</summary>
    public long BytesReceived { get; private set; }

    /// <summary>Frames missing from the neighbour's sequence.</summary>
    public long SequenceGaps { get; private set; }

    public void Start(INodeContext context) => _context = context;

    /// <summary>Starts or stops flooding (event loop); <paramref name="framesPerSecond"/> 0 means as fast as the link takes them.</summary>
    public void SetFlooding(bool on, double framesPerSecond = 0)
    {
        Flooding = on;
        _framesPerNs = framesPerSecond / 1e9;
        _burst = Math.Max(8, framesPerSecond / 100); // ten milliseconds' worth: the loop may be descheduled that long
        _tokens = 0;
        _refilledAt = _context?.Now ?? 0;
        Fill();
    }

    public void OnFrame(in InboundFrame frame)
    {
        var payload = frame.Payload;
        FramesReceived++;
        BytesReceived += FrameLayout.PayloadOffset(frame.Header.IsKeyRouted) + payload.Length;
        if (payload.Length >= sizeof(long))
        {
            long sequence = BinaryPrimitives.ReadInt64BigEndian(payload);
            if (sequence > _expected)
            {
                SequenceGaps += sequence - _expected;
            }
            _expected = sequence + 1;
        }
    }

    public void OnSendReady(Port port) => Fill();

    public void OnLinkChanged(Port port, bool up)
    {
        if (up && port == _port)
        {
            Fill();
        }
    }

    private void Fill()
    {
        var ctx = _context;
        if (ctx is null || !Flooding)
        {
            return;
        }
        bool paced = _framesPerNs > 0;
        if (paced)
        {
            long now = ctx.Now;
            _tokens = Math.Min(_burst, _tokens + ((now - _refilledAt) * _framesPerNs));
            _refilledAt = now;
            if (!_tickScheduled)
            {
                _tickScheduled = true;
                ctx.SetTimer(NodeOptions.Millisecond, _tick ??= Tick);
            }
        }
        var header = new FrameHeader(Id, ctx.Self, ctx.Torus.Neighbour(ctx.Self, _port), ttl: 1);
        while (!paced || _tokens >= 1)
        {
            BinaryPrimitives.WriteInt64BigEndian(_payload, _nextSequence);
            if (ctx.TrySend(_port, ref header, default, _payload) != SendStatus.Queued)
            {
                return; // resumed by OnSendReady (queue full) or OnLinkChanged (link down)
            }
            _nextSequence++;
            FramesQueued++;
            _tokens--;
        }
    }

    private void Tick()
    {
        _tickScheduled = false;
        Fill();
    }
}
