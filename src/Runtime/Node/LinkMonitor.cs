using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

/// <summary>
/// Neighbour liveness: sends a beacon on every link each interval and declares a link down after a number of
/// silent intervals; any valid frame from the neighbour counts as hearing it. A beacon also proves the wiring:
/// it must come from the server and port the torus says is at the other end.
/// </summary>
public sealed class LinkMonitor : IService
{
    private const int BeaconPayloadSize = 8;
    private const uint BeaconMagic = 0xCA3D_00B1;

    private readonly NodeHost _host;
    private readonly NodeOptions _options;
    private readonly long[] _lastHeard = new long[Ports.Count];
    private readonly bool[] _heardEver = new bool[Ports.Count];
    private Action? _tick;

    internal LinkMonitor(NodeHost host, NodeOptions options)
    {
        _host = host;
        _options = options;
    }

    public byte Id => WellKnownServices.LinkMonitor;

    public string Name => "link-monitor";

    /// <summary>Beacons received from a server other than the expected neighbour (miswired link).</summary>
    public long WiringErrors { get; private set; }

    public long BeaconsSent { get; private set; }

    /// <summary>Frames to this service that are no beacon: too short, a wrong magic, or delivered locally.</summary>
    public long MalformedBeacons { get; private set; }

    /// <summary>Whether the neighbour on <paramref name="port"/> has ever been heard.</summary>
    public bool HasHeard(Port port) => _heardEver[(int)port];

    public void Start(INodeContext context)
    {
        long now = _host.Now;
        for (int p = 0; p < Ports.Count; p++)
        {
            _lastHeard[p] = now;
        }
        _tick = Tick;
        Tick();
    }

    public void OnFrame(in InboundFrame frame)
    {
        var payload = frame.Payload;
        if (frame.IsLocal || payload.Length < BeaconPayloadSize || BinaryPrimitives.ReadUInt32BigEndian(payload) != BeaconMagic)
        {
            MalformedBeacons++;
            return;
        }
        var port = frame.ArrivalPort;
        var senderPort = (Port)payload[4];
        var expected = _host.Torus.Neighbour(_host.Self, port);
        if (frame.Header.Source != expected || senderPort != port.Opposite())
        {
            WiringErrors++;
            _host.Log(LogLevel.Warning, $"beacon on {port.Name()} came from {frame.Header.Source} port {senderPort.Name()}, expected {expected} port {port.Opposite().Name()}");
            return;
        }
        Heard(port);
    }

    internal void Heard(Port port)
    {
        _lastHeard[(int)port] = _host.Now;
        _heardEver[(int)port] = true;
        if (!_host.IsLinkUp(port) && _host.HasCarrier(port))
        {
            _host.SetLinkState(port, true);
        }
    }

    internal void CarrierReturned(Port port) => SendBeacon(port);

    private void Tick()
    {
        long now = _host.Now;
        long deadline = _options.BeaconInterval * _options.BeaconMisses;
        foreach (var port in Ports.All)
        {
            if (_host.IsLinkUp(port) && now - _lastHeard[(int)port] > deadline)
            {
                _host.SetLinkState(port, false);
            }
            SendBeacon(port);
        }
        _host.SetTimer(_options.BeaconInterval, _tick!);
    }

    private void SendBeacon(Port port)
    {
        if (!_host.HasCarrier(port))
        {
            return;
        }
        Span<byte> payload = stackalloc byte[BeaconPayloadSize];
        BinaryPrimitives.WriteUInt32BigEndian(payload, BeaconMagic);
        payload[4] = (byte)port;
        payload[5] = payload[6] = payload[7] = 0;
        var header = new FrameHeader(Id, _host.Self, _host.Torus.Neighbour(_host.Self, port), ttl: 1);
        if (_host.TrySend(port, ref header, default, payload) == SendStatus.Queued)
        {
            BeaconsSent++;
        }
    }
}
