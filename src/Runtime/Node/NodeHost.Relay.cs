using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

// Relaying below the services: frames for another server go straight to a port's transit queue.
public sealed partial class NodeHost
{
    private IFrameRelay? _relay;

    /// <summary>
    /// Relays every received frame addressed to another server (null: such frames go to their service as any other).
    /// Set before the node starts.
    /// </summary>
    public IFrameRelay? Relay
    {
        get => _relay;
        set
        {
            if (_started)
            {
                throw new InvalidOperationException("the relay is set before the node starts");
            }
            _relay = value;
        }
    }

    /// <summary>
    /// Queues a frame for another server as transit on the port the relay names: it shares the port with the
    /// server's own frames through the round robin, and a full transit queue drops it (TCP recovers it).
    /// </summary>
    private void RelayFrame(Frame frame, in FrameHeader header, Port arrival)
    {
        if (!_relay!.TryRoute(header, frame.Span, arrival, out var port) || !CanCarry(port, header.ServiceId))
        {
            CountForwardDrop(arrival);
            frame.Release();
            return;
        }
        var queue = _portQueues[(int)port][_queueSlot[header.ServiceId]];
        if (!queue.TryEnqueueTransit(frame))
        {
            CountForwardDrop(port);
            frame.Release();
            return;
        }
        Counters.FramesForwarded++;
        Pump(port);
    }
}
