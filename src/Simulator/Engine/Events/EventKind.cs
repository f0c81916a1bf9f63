namespace Camdoop.Simulator.Events;

/// <summary>What a scheduled event does when it falls due.</summary>
public enum EventKind : byte
{
    /// <summary>A scheduled callback (failures, restores, test hooks).</summary>
    Action = 0,

    /// <summary>A node's timer.</summary>
    Timer = 1,

    /// <summary>The frame at the head of a link's transmit ring has been serialised onto the wire.</summary>
    TransmitComplete = 2,

    /// <summary>A frame reaches the receiving node (after propagation and forwarding latency).</summary>
    FrameArrival = 3,

    /// <summary>A server's core has finished the work it was charged: the events that waited for it run.</summary>
    ComputeDone = 4,
}
