using System.Buffers.Binary;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Network.Services;

/// <summary>
/// Keeps its queue on each chosen port full of frames for the neighbour's service of the same id, refilling on
/// every send-ready notice, until <see cref="Limit"/> frames have gone out per port. Received frames are counted
/// by (sending) service id.
/// </summary>
internal sealed class SaturatingSender : IService
{
    private readonly Port[] _ports;
    private readonly byte[] _payload;
    private readonly int[] _sequence = new int[Ports.Count];
    private INodeContext _context = null!;

    public SaturatingSender(byte id, int payloadLength, IEnumerable<Port> ports, long limit = long.MaxValue)
    {
        Id = id;
        _ports = [.. ports];
        _payload = new byte[payloadLength];
        Limit = limit;
    }

    public byte Id { get; }

    public string Name => $"saturate-{Id}";

    public long Limit { get; }

    public long Sent { get; private set; }

    public long Received { get; private set; }

    public long ReceivedBytes { get; private set; }

    public long RefusedLinkDown { get; private set; }

    /// <summary>Sequence numbers received, when recording is on.</summary>
    public List<int>? ReceivedSequences { get; set; }

    public void Start(INodeContext context)
    {
        _context = context;
        foreach (var port in _ports)
        {
            Fill(port);
        }
    }

    public void OnFrame(in InboundFrame frame)
    {
        Received++;
        ReceivedBytes += frame.Payload.Length;
        ReceivedSequences?.Add(BinaryPrimitives.ReadInt32BigEndian(frame.Payload));
    }

    public void OnSendReady(Port port) => Fill(port);

    public void OnLinkChanged(Port port, bool up)
    {
        if (up && Array.IndexOf(_ports, port) >= 0)
        {
            Fill(port);
        }
    }

    private void Fill(Port port)
    {
        var header = new FrameHeader(Id, _context.Self, _context.Torus.Neighbour(_context.Self, port));
        while (_sequence[(int)port] < Limit)
        {
            BinaryPrimitives.WriteInt32BigEndian(_payload, _sequence[(int)port]);
            var status = _context.TrySend(port, ref header, default, _payload);
            if (status == SendStatus.LinkDown)
            {
                RefusedLinkDown++;
                return;
            }
            if (status != SendStatus.Queued)
            {
                return; // queue full: OnSendReady resumes
            }
            _sequence[(int)port]++;
            Sent++;
        }
    }
}
