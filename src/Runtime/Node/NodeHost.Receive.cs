using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

// Inbound side: validate, count, and dispatch to the key router or the owning service.
public sealed partial class NodeHost
{
    private readonly Queue<Frame> _loopback = new();
    private bool _loopbackScheduled;
    private Action? _drainLoopback;

    /// <summary>Set by <see cref="TryForward"/> when the frame being dispatched was handed on and must not be released.</summary>
    private Frame? _dispatchConsumed;

    public void OnFrameReceived(Port port, Frame frame)
    {
        if (_halted)
        {
            frame.Release();
            return;
        }
        int p = (int)port;
        Counters.FramesReceived[p]++;
        Counters.BytesReceived[p] += frame.Length;
        var error = FrameCodec.TryRead(frame.Span, Torus, out var header);
        if (error == FrameError.None && _services[header.ServiceId] is null)
        {
            error = FrameError.UnknownService;
        }
        if (error != FrameError.None)
        {
            Counters.Rejected[(int)error]++;
            frame.Release();
            return;
        }
        if (header.ServiceId != WellKnownServices.LinkMonitor)
        {
            // Beacons prove the wiring first and mark the neighbour heard themselves; a beacon from the wrong
            // server must not bring the link up.
            Monitor.Heard(port);
        }
        if (_relay is not null && header.Destination != Self && header.ServiceId != WellKnownServices.LinkMonitor)
        {
            // Beacons are link-local: they name the torus neighbour, not the server at the cable's end.
            RelayFrame(frame, header, port);
            return;
        }
        Dispatch(frame, header, port, isLocal: false);
    }

    public void Deliver(in InboundFrame frame)
    {
        var service = _services[frame.Header.ServiceId];
        if (service is null)
        {
            Counters.Rejected[(int)FrameError.UnknownService]++;
            return;
        }
        InvokeOnFrame(service, frame);
    }

    public void DeliverLocal(ref FrameHeader header, ReadOnlySpan<byte> key, ReadOnlySpan<byte> payload)
    {
        if (_halted)
        {
            return;
        }
        var frame = Encode(ref header, key, payload);
        _loopback.Enqueue(frame);
        Counters.LocalDeliveries++;
        if (!_loopbackScheduled)
        {
            // Delivered from its own event, never re-entrantly inside the sender's callback.
            _loopbackScheduled = true;
            SetTimer(0, _drainLoopback ??= DrainLoopback);
        }
    }

    private void DrainLoopback()
    {
        _loopbackScheduled = false;
        int n = _loopback.Count;
        while (n-- > 0 && !_halted)
        {
            var frame = _loopback.Dequeue();
            var error = FrameCodec.TryRead(frame.Span, Torus, out var header);
            if (error == FrameError.None && _services[header.ServiceId] is null)
            {
                error = FrameError.UnknownService;
            }
            if (error != FrameError.None)
            {
                Counters.Rejected[(int)error]++;
                frame.Release();
                continue;
            }
            // Key-routed frames to ourselves still pass the router, which delivers them here.
            Dispatch(frame, header, default, isLocal: true);
        }
    }

    /// <summary>Releases frames waiting for local delivery (the node is stopping).</summary>
    private void FlushLoopback()
    {
        while (_loopback.Count > 0)
        {
            _loopback.Dequeue().Release();
        }
    }

    private void Dispatch(Frame frame, in FrameHeader header, Port port, bool isLocal)
    {
        var inbound = new InboundFrame(frame, header, port, isLocal);
        if ((header.Flags & FrameFlags.Routed) != 0 && _keyRouter is not null)
        {
            if (_options.IsolateServiceFaults)
            {
                try
                {
                    _keyRouter.OnKeyRoutedFrame(inbound);
                }
                // a service's bug must not take the server down
                catch (Exception ex)
                {
                    Counters.ServiceFaults++;
                    Log(LogLevel.Error, $"key router failed: {ex}");
                }
            }
            else
            {
                _keyRouter.OnKeyRoutedFrame(inbound);
            }
        }
        else
        {
            InvokeOnFrame(_services[header.ServiceId]!, inbound);
        }
        if (ReferenceEquals(_dispatchConsumed, frame))
        {
            _dispatchConsumed = null;
        }
        else
        {
            frame.Release();
        }
    }

    private void InvokeOnFrame(IService service, in InboundFrame frame)
    {
        if (!_options.IsolateServiceFaults)
        {
            service.OnFrame(frame);
            return;
        }
        try
        {
            service.OnFrame(frame);
        }
        // a service's bug must not take the server down
        catch (Exception ex)
        {
            Counters.ServiceFaults++;
            Log(LogLevel.Error, $"service {service.Name} failed on a frame: {ex}");
        }
    }
}
