using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Benchmarks.Simulator;

/// <summary>Keeps all six of its server's links saturated with frames for the neighbours; drops what it receives.</summary>
internal sealed class NeighbourFloodService(int payloadLength) : IService
{
    private readonly byte[] _payload = new byte[payloadLength];
    private INodeContext _context = null!;

    public byte Id => 20;

    public string Name => "neighbour-flood";

    public void Start(INodeContext context)
    {
        _context = context;
        foreach (var port in Ports.All)
        {
            Fill(port);
        }
    }

    public void OnFrame(in InboundFrame frame)
    {
    }

    public void OnSendReady(Port port) => Fill(port);

    private void Fill(Port port)
    {
        var header = new FrameHeader(Id, _context.Self, _context.Torus.Neighbour(_context.Self, port));
        while (_context.TrySend(port, ref header, default, _payload) == SendStatus.Queued)
        {
        }
    }
}
