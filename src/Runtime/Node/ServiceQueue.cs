using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Node;

/// <summary>
/// One service's outbound queue on one port: frames the service originates, and frames it forwards for others.
/// Forwarded (transit) frames go first within the service's round-robin turn: they are already in the network,
/// and draining them before admitting new traffic keeps a saturated cube from dropping what it carries. Only the
/// originated side pushes back on the service; a full transit side drops (the end-to-end transport recovers).
/// </summary>
internal sealed class ServiceQueue
{
    private readonly FrameRing _local;
    private readonly FrameRing _transit;

    public ServiceQueue(byte serviceId, int capacity)
    {
        ServiceId = serviceId;
        _local = new FrameRing(capacity);
        _transit = new FrameRing(capacity);
    }

    public byte ServiceId { get; }

    /// <summary>Frames waiting, originated and transit.</summary>
    public int Count => _local.Count + _transit.Count;

    /// <summary>Room for frames the service originates.</summary>
    public int Space => _local.Space;

    public int TransitSpace => _transit.Space;

    /// <summary>Set when a send was refused for lack of space; cleared when the service is told there is room.</summary>
    public bool WantsReadyNotice { get; set; }

    public bool TryEnqueue(Frame frame) => _local.TryEnqueue(frame);

    public bool TryEnqueueTransit(Frame frame) => _transit.TryEnqueue(frame);

    public Frame Peek() => _transit.Count > 0 ? _transit.Peek() : _local.Peek();

    public Frame Dequeue() => _transit.Count > 0 ? _transit.Dequeue() : _local.Dequeue();

    /// <summary>Releases every queued frame; returns how many.</summary>
    public int Flush() => _transit.Flush() + _local.Flush();
}
