using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.Node.Fakes;

internal delegate void FrameHandler(in InboundFrame frame);

/// <summary>A service that records every callback; tests plug behaviour in through the hooks.</summary>
internal sealed class RecordingService(byte id, string name = "recorder") : IService
{
    public byte Id { get; } = id;

    public string Name { get; } = name;

    public INodeContext? Context { get; private set; }

    public List<(FrameHeader Header, byte[] Payload, byte[] Key, Port ArrivalPort, bool IsLocal)> Frames { get; } = [];

    public List<(Port Port, bool Up)> LinkChanges { get; } = [];

    public List<Port> SendReady { get; } = [];

    public bool Stopped { get; private set; }

    /// <summary>True while <see cref="OnFrame"/> runs, to detect re-entrant delivery.</summary>
    public bool InOnFrame { get; private set; }

    public FrameHandler? OnFrameHook { get; set; }

    public Action<INodeContext>? OnStartHook { get; set; }

    public void Start(INodeContext context)
    {
        Context = context;
        OnStartHook?.Invoke(context);
    }

    public void OnFrame(in InboundFrame frame)
    {
        Assert.False(InOnFrame, "OnFrame was called re-entrantly");
        InOnFrame = true;
        try
        {
            Frames.Add((frame.Header, frame.Payload.ToArray(), frame.Key.ToArray(), frame.ArrivalPort, frame.IsLocal));
            OnFrameHook?.Invoke(frame);
        }
        finally
        {
            InOnFrame = false;
        }
    }

    public void OnLinkChanged(Port port, bool up) => LinkChanges.Add((port, up));

    public void OnSendReady(Port port) => SendReady.Add(port);

    public void Stop() => Stopped = true;
}
