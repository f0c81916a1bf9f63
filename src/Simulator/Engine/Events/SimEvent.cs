namespace Camdoop.Simulator.Events;

/// <summary>
/// The payload of a scheduled event. Plain data with no references, so the queue moves it without GC barriers:
/// frames stay in their link's FIFO and actions in an <see cref="ActionTable"/>, both named by <see cref="Target"/>.
/// </summary>
public readonly record struct SimEvent(EventKind Kind, int Target, int Epoch, long Arg)
{
    /// <summary>An event for link <paramref name="link"/> that is void once the link's epoch moves on.</summary>
    public static SimEvent ForLink(EventKind kind, int link, int epoch) => new(kind, link, epoch, 0);

    /// <summary>A node timer, void once the node has rebooted (<paramref name="boot"/> no longer current).</summary>
    public static SimEvent ForTimer(int node, int boot, long timerId) => new(EventKind.Timer, node, boot, timerId);

    public static SimEvent ForAction(int slot) => new(EventKind.Action, slot, 0, 0);
}
