namespace Camdoop.Runtime.Node;

/// <summary>Tunables of one server's runtime. Times are in nanoseconds.</summary>
public sealed record NodeOptions
{
    public const long Millisecond = 1_000_000;

    /// <summary>Frames each service may have waiting per port before it is pushed back.</summary>
    public int QueueCapacity { get; init; } = 64;

    /// <summary>
    /// Frames each service's transit queue per port holds (frames forwarded or relayed for others), when more than
    /// <see cref="QueueCapacity"/>: a GRIN server's relay queue is as deep as a switch port's.
    /// </summary>
    public int TransitQueueCapacity { get; init; }

    /// <summary>
    /// Urgent frames (<see cref="Frames.FrameFlags.Urgent"/>) each service's queue per port holds in transit, apart from
    /// its transit data: acks and requests are a few frames per stream, far fewer than the data they steer.
    /// </summary>
    public const int UrgentTransitCapacity = 16;

    /// <summary>How often a liveness beacon goes out on every link.</summary>
    public long BeaconInterval { get; init; } = 10 * Millisecond;

    /// <summary>A link is declared down after this many beacon intervals without hearing from the neighbour.</summary>
    public int BeaconMisses { get; init; } = 3;

    /// <summary>
    /// Whether links with carrier count as up before the first beacon arrives. The simulator starts a healthy
    /// cube this way; a real server waits to hear each neighbour.
    /// </summary>
    public bool AssumeLinksUpAtStart { get; init; }

    /// <summary>Catch exceptions thrown by service callbacks, log and count them, and keep the node running.</summary>
    public bool IsolateServiceFaults { get; init; } = true;

    public string DataDirectory { get; init; } = "";
}
