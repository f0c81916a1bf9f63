using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Transport.Tcp;

/// <summary>The sending end of one connection, as its node's <see cref="TcpService"/> keeps it.</summary>
public sealed class TcpConnection
{
    internal TcpConnection(uint id, Coordinate peer, Port port, TcpSender sender)
    {
        Id = id;
        Peer = peer;
        Port = port;
        Sender = sender;
    }

    public uint Id { get; }

    public Coordinate Peer { get; }

    /// <summary>The NIC its segments leave on.</summary>
    public Port Port { get; }

    public TcpSender Sender { get; }

    /// <summary>Raised once, on the node's event loop, when the whole stream has been acknowledged.</summary>
    public Action<TcpConnection>? Completed { get; set; }

    /// <summary>Waiting for room in its port's queue.</summary>
    internal bool Blocked { get; set; }

    /// <summary>The retransmission timer set, and the deadline it was set for (long.MaxValue: none).</summary>
    internal TimerHandle Timer { get; set; }

    internal long TimerDue { get; set; } = long.MaxValue;

    internal Action? OnTimer { get; set; }

    /// <summary>Pacing: when the next segment may leave, and whether a timer waits for it.</summary>
    internal long NextSendAt { get; set; }

    internal bool PaceTimerSet { get; set; }

    internal Action? OnPace { get; set; }
}
