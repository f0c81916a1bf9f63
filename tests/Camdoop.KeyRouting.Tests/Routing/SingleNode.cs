using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting.Tests.Routing;

/// <summary>
/// One real node host with the routing service, whose six links only record what is sent on them: lets a test
/// play the neighbours by hand. Timers run when the test advances the clock.
/// </summary>
internal sealed class SingleNode : INodeDriver
{
    private readonly List<(long Due, long Seq, long Id)> _timers = [];
    private long _seq;

    public SingleNode(Torus torus, Coordinate self, KeyRoutingOptions? options = null)
    {
        Torus = torus;
        Host = new NodeHost(self, torus, this, new FramePool(), new NodeOptions { AssumeLinksUpAtStart = true, IsolateServiceFaults = false, BeaconInterval = 3_600_000_000_000 });
        foreach (var p in Ports.All)
        {
            Links[(int)p] = new RecordingLink();
            Host.Attach(p, Links[(int)p]);
        }
        Routing = KeyRoutingService.Install(Host, options ?? new KeyRoutingOptions { RefreshInterval = 0 });
        Sink = new SinkService();
        Host.Register(Sink);
        Host.Start();
        RunTimers();
    }

    public Torus Torus { get; }

    public NodeHost Host { get; }

    public KeyRoutingService Routing { get; }

    public SinkService Sink { get; }

    public RecordingLink[] Links { get; } = new RecordingLink[Ports.Count];

    public long Now { get; private set; }

    public void ScheduleTimer(NodeHost host, long dueTime, long timerId) => _timers.Add((dueTime, _seq++, timerId));

    public void Log(Coordinate node, LogLevel level, string message)
    {
    }

    /// <summary>Fires every timer due up to <paramref name="until"/> (default: now), in time order.</summary>
    public void RunTimers(long? until = null)
    {
        long end = until ?? Now;
        while (true)
        {
            var due = _timers.Where(t => t.Due <= end).OrderBy(t => t.Due).ThenBy(t => t.Seq).FirstOrDefault();
            if (due == default)
            {
                break;
            }
            _timers.Remove(due);
            Now = Math.Max(Now, due.Due);
            Host.FireTimer(due.Id);
        }
        Now = end;
    }

    public Coordinate Neighbour(Port p) => Torus.Neighbour(Host.Self, p);

    /// <summary>Control frames (routing service) sent on <paramref name="port"/> so far, decoded.</summary>
    public List<List<LinkStateAdvertisement>> ControlSent(Port port) =>
        Links[(int)port].Sent
            .Where(f => f[15] == WellKnownServices.KeyRouting)
            .Select(f => Decode(f))
            .ToList();

    public void ClearSent()
    {
        foreach (var l in Links)
        {
            l.Sent.Clear();
        }
    }

    /// <summary>Delivers an advertisement batch as if the neighbour on <paramref name="port"/> had sent it.</summary>
    public void ReceiveAdvertisements(Port port, params LinkStateAdvertisement[] entries)
    {
        var payload = new byte[LinkStateMessage.SizeFor(entries.Length)];
        LinkStateMessage.WriteHeader(payload, entries.Length);
        for (int i = 0; i < entries.Length; i++)
        {
            LinkStateMessage.WriteEntry(payload, i, Torus, entries[i]);
        }
        Receive(port, WellKnownServices.KeyRouting, FrameFlags.None, payload);
    }

    public void Receive(Port port, byte service, FrameFlags flags, byte[] payload, ReadOnlySpan<byte> key = default, Coordinate? source = null, Coordinate? destination = null, byte ttl = 1)
    {
        var frame = Host.Frames.Rent();
        var header = new FrameHeader(service, source ?? Neighbour(port), destination ?? Host.Self, flags, ttl);
        frame.Length = FrameCodec.Write(frame.Buffer, ref header, key, payload);
        Host.OnFrameReceived(port, frame);
    }

    private List<LinkStateAdvertisement> Decode(byte[] frame)
    {
        Assert.Equal(FrameError.None, FrameCodec.TryRead(frame, Torus, out var header));
        var payload = FrameCodec.Payload(frame, header);
        int count = LinkStateMessage.TryReadCount(payload);
        Assert.True(count >= 0);
        var list = new List<LinkStateAdvertisement>();
        for (int i = 0; i < count; i++)
        {
            Assert.True(LinkStateMessage.TryReadEntry(payload, i, Torus, out var lsa));
            list.Add(lsa);
        }
        return list;
    }

    internal sealed class RecordingLink : ILinkTransport
    {
        public List<byte[]> Sent { get; } = [];

        public bool CanSend => true;

        public bool CarrierUp { get; set; } = true;

        public bool TrySend(Frame frame)
        {
            Sent.Add(frame.Span.ToArray());
            frame.Release();
            return true;
        }
    }

    internal sealed class SinkService : IService
    {
        public List<(FrameHeader Header, byte[] Payload)> Received { get; } = [];

        public byte Id => 200;

        public string Name => "sink";

        public void Start(INodeContext context)
        {
        }

        public void OnFrame(in InboundFrame frame) => Received.Add((frame.Header, frame.Payload.ToArray()));
    }
}
