using System.Buffers.Binary;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Network.Services;

/// <summary>Counts the frames that arrive for its id, per port; records arrival times when asked.</summary>
internal sealed class SinkService(byte id, bool recordArrivals = false) : IService
{
    private INodeContext _context = null!;

    public byte Id { get; } = id;

    public string Name => "sink";

    public long Frames { get; private set; }

    public long Bytes { get; private set; }

    public long[] FramesByPort { get; } = new long[Ports.Count];

    /// <summary>(arrival time, frame payload length, sequence number in the first 4 payload bytes).</summary>
    public List<(long Time, int PayloadLength, int Sequence)> Arrivals { get; } = [];

    public void Start(INodeContext context) => _context = context;

    public void OnFrame(in InboundFrame frame)
    {
        Frames++;
        Bytes += frame.Payload.Length;
        FramesByPort[(int)frame.ArrivalPort]++;
        if (recordArrivals)
        {
            int sequence = frame.Payload.Length >= 4 ? BinaryPrimitives.ReadInt32BigEndian(frame.Payload) : -1;
            Arrivals.Add((_context.Now, frame.Payload.Length, sequence));
        }
    }
}
