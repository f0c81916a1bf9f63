using Camdoop.Runtime.Node;

namespace Camdoop.Simulator.Tests.Network.Services;

/// <summary>Calls back once, from inside an event (a timer) at the given time.</summary>
internal sealed class CallbackService(long at, Action callback) : IService
{
    public byte Id => 42;

    public string Name => "callback";

    public void Start(INodeContext context) => context.SetTimer(at, callback);

    public void OnFrame(in InboundFrame frame)
    {
    }
}
