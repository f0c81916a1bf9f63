using Camdoop.KeyRouting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;

namespace Camdoop.Benchmarks.KeyRouting;

/// <summary>Sends key-routed frames to random keys as fast as its queues take them, and counts what it receives.</summary>
internal sealed class KeyRoutedLoadService(int payloadSize, ulong seed) : IService
{
    public const byte ServiceId = 210;

    private readonly Xoshiro256StarStar _random = new(seed);
    private readonly byte[] _payload = new byte[payloadSize];
    private INodeContext _context = null!;
    private KeyRoutingService _routing = null!;
    private bool _filling;

    public byte Id => ServiceId;

    public string Name => "key-routed-load";

    public long Sent { get; private set; }

    public long Received { get; private set; }

    public void Start(INodeContext context)
    {
        _context = context;
        _routing = context.GetService<KeyRoutingService>()!;
        context.SetTimer(0, Fill);
    }

    public void OnFrame(in InboundFrame frame) => Received++;

    public void OnSendReady(Port port) => Fill();

    /// <summary>Sends until some queue refuses; that queue's OnSendReady starts the next round.</summary>
    private void Fill()
    {
        if (_filling)
        {
            return;
        }
        _filling = true;
        while (true)
        {
            var key = new Key(_random.NextUInt64(), _random.NextUInt64(), (uint)_random.NextUInt64());
            var status = _routing.Route(Id, key, _payload, out _);
            if (status != SendStatus.Queued)
            {
                break;
            }
            Sent++;
        }
        _filling = false;
    }
}
