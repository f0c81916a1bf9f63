using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Network.Services;

/// <summary>
/// At <paramref name="at"/> declares <paramref name="bytes"/> of <paramref name="kind"/> work and then sends one frame to
/// service <paramref name="sinkId"/> on <paramref name="sendOn"/> (if given); a second timer due one nanosecond later
/// records when it actually fired.
/// </summary>
internal sealed class WorkingService(long at, ComputeWork kind, long bytes, Port? sendOn = null, byte sinkId = 0) : IService
{
    private INodeContext _context = null!;

    public byte Id => 43;

    public string Name => "working";

    public long LateTimerFiredAt { get; private set; } = -1;

    public void Start(INodeContext context)
    {
        _context = context;
        context.SetTimer(at, Work);
        context.SetTimer(at + 1, () => LateTimerFiredAt = _context.Now);
    }

    public void OnFrame(in InboundFrame frame)
    {
    }

    private void Work()
    {
        _context.Compute(kind, bytes);
        if (sendOn is { } port)
        {
            var header = new FrameHeader(sinkId, _context.Self, _context.Torus.Neighbour(_context.Self, port));
            _context.TrySend(port, ref header, default, new byte[1000]);
        }
    }
}
