using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Network.Services;

/// <summary>Records every link state change with its virtual time.</summary>
internal sealed class LinkWatcher : IService
{
    private INodeContext _context = null!;

    public byte Id => 30;

    public string Name => "link-watcher";

    public List<(long Time, Port Port, bool Up)> Changes { get; } = [];

    public bool Stopped { get; private set; }

    public void Start(INodeContext context) => _context = context;

    public void OnFrame(in InboundFrame frame)
    {
    }

    public void OnLinkChanged(Port port, bool up) => Changes.Add((_context.Now, port, up));

    public void Stop() => Stopped = true;
}
