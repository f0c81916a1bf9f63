using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Node;

/// <summary>
/// One service's outbound queue on one port: frames the service originates, and frames it forwards for others.
/// Forwarded (transit) frames go first within the service's round-robin turn: they are already in the network,
/// and draining them before admitting new traffic keeps a saturated cube from dropping what it carries. Only the
/// originated side pushes back on the service; a full transit side drops (the end-to-end transport recovers).
/// Urgent transit frames (<see cref="FrameFlags.Urgent"/>: a service's acks and requests) have a short ring of their
/// own that goes before both: an ack or a request that would end a stall must not be dropped for, or wait behind, the
/// data that stalls. The service orders its own frames itself, so what it originates goes to its own side, urgent or not.
/// </summary>
internal sealed class ServiceQueue
{
    private readonly FrameRing _local;
    private readonly FrameRing _transit;
    private readonly FrameRing _urgent = new(NodeOptions.UrgentTransitCapacity);

    public ServiceQueue(byte serviceId, int capacity, int transitCapacity)
    {
        ServiceId = serviceId;
        _local = new FrameRing(capacity);
        _transit = new FrameRing(transitCapacity);
    }

    public byte ServiceId { get; }

    /// <summary>Frames waiting, originated and transit.</summary>
    public int Count => _local.Count + _transit.Count + _urgent.Count;

    /// <summary>Room for frames the service originates.</summary>
    public int Space => _local.Space;

    public int TransitSpace => _transit.Space;

    /// <summary>Room for urgent transit frames.</summary>
    public int UrgentSpace => _urgent.Space;

    /// <summary>The service's rate limit on this port; null for none. The round robin skips the queue while it lacks tokens.</summary>
    public TokenBucket? Limit { get; set; }

    /// <summary>Set when a send was refused for lack of space; cleared when the service is told there is room.</summary>
    public bool WantsReadyNotice { get; set; }

    /// <summary>What went through this queue: frames and bytes admitted (originated and transit) and sent.</summary>
    public ServiceQueueCounters Counters => new(_framesQueued, _bytesQueued, _framesSent, _bytesSent, Count);

    private long _framesQueued;
    private long _bytesQueued;
    private long _framesSent;
    private long _bytesSent;

    public bool TryEnqueue(Frame frame) => Admitted(_local.TryEnqueue(frame), frame);

    public bool TryEnqueueTransit(Frame frame) => Admitted(_transit.TryEnqueue(frame), frame);

    public bool TryEnqueueUrgent(Frame frame) => Admitted(_urgent.TryEnqueue(frame), frame);

    public Frame Peek() => _urgent.Count > 0 ? _urgent.Peek() : _transit.Count > 0 ? _transit.Peek() : _local.Peek();

    public Frame Dequeue() => _urgent.Count > 0 ? _urgent.Dequeue() : _transit.Count > 0 ? _transit.Dequeue() : _local.Dequeue();

    /// <summary>Counts a frame the link took from this queue.</summary>
    public void CountSent(int length)
    {
        _framesSent++;
        _bytesSent += length;
    }

    private bool Admitted(bool queued, Frame frame)
    {
        if (queued)
        {
            _framesQueued++;
            _bytesQueued += frame.Length;
        }
        return queued;
    }

    /// <summary>Releases every queued frame; returns how many.</summary>
    public int Flush() => _urgent.Flush() + _transit.Flush() + _local.Flush();
}
