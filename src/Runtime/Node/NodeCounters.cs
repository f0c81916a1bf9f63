using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

/// <summary>Per-node frame counters. Written by the event loop only; other threads may read them for status.</summary>
public sealed class NodeCounters
{
    public long[] FramesSent { get; } = new long[Ports.Count];
    public long[] BytesSent { get; } = new long[Ports.Count];
    public long[] FramesReceived { get; } = new long[Ports.Count];
    public long[] BytesReceived { get; } = new long[Ports.Count];

    /// <summary>
    /// Per port, nanoseconds during which frames waited in the port's queues for its link: the time the link was the
    /// bottleneck. Accumulated when the backlog empties; <see cref="BacklogSince"/> holds an open interval.
    /// </summary>
    public long[] BacklogNs { get; } = new long[Ports.Count];

    /// <summary>Per port, when the current backlog began (node clock), or -1 when the port's queues are empty.</summary>
    public long[] BacklogSince { get; } = [-1, -1, -1, -1, -1, -1];

    /// <summary>Per port, frames dropped there: forwarded frames refused by a full transit queue or an expired TTL, and frames flushed when the link went down.</summary>
    public long[] PortDrops { get; } = new long[Ports.Count];

    /// <summary>Received frames rejected, by <see cref="FrameError"/>.</summary>
    public long[] Rejected { get; } = new long[FrameErrors.Count];

    /// <summary>Frames a service tried to queue while its queue was full.</summary>
    public long QueueFull { get; set; }

    /// <summary>Frames sent towards a link that was down.</summary>
    public long SentOnDownLink { get; set; }

    /// <summary>Forwarded frames dropped because the next queue was full or the TTL ran out.</summary>
    public long ForwardDropped { get; set; }

    public long FramesForwarded { get; set; }

    public long LocalDeliveries { get; set; }

    /// <summary>Frames dropped because the link went down while they waited in a queue.</summary>
    public long QueueFlushed { get; set; }

    /// <summary>Services' own failures caught at the node boundary (an exception out of a callback).</summary>
    public long ServiceFaults { get; set; }

    public long TotalRejected
    {
        get
        {
            long sum = 0;
            foreach (var r in Rejected)
            {
                sum += r;
            }
            return sum;
        }
    }

    public long RejectedFor(FrameError error) => Rejected[(int)error];

    /// <summary>Backlog time on <paramref name="port"/> up to <paramref name="now"/>, the open interval included.</summary>
    public long BacklogAt(Port port, long now)
    {
        long since = BacklogSince[(int)port];
        return BacklogNs[(int)port] + (since >= 0 ? Math.Max(0, now - since) : 0);
    }
}
