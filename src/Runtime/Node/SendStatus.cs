namespace Camdoop.Runtime.Node;

public enum SendStatus : byte
{
    /// <summary>Accepted into the service's queue for the port.</summary>
    Queued = 0,

    /// <summary>The service's queue for the port is full: back off until <see cref="IService.OnSendReady"/>.</summary>
    QueueFull,

    /// <summary>The link is down (or not connected); the frame was not queued.</summary>
    LinkDown,

    /// <summary>A forwarded frame ran out of TTL and was dropped.</summary>
    TtlExpired,

    /// <summary>No path of live links leads to the destination in this server's view; the frame was not queued.</summary>
    Unreachable,
}
