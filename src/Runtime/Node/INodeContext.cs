using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Node;

/// <summary>Everything a service may know of and do to the world. Implemented by <see cref="NodeHost"/>.</summary>
public interface INodeContext
{
    Coordinate Self { get; }

    Torus Torus { get; }

    /// <summary>Nanoseconds on the node's clock (virtual time in the simulator).</summary>
    long Now { get; }

    /// <summary>
    /// Wall-clock milliseconds since the Unix epoch, for timestamps people read (when a dataset was created), never for
    /// timing: time durations with <see cref="Now"/>. Derived from virtual time in the simulator.
    /// </summary>
    long UnixTimeMilliseconds { get; }

    /// <summary>
    /// Nanoseconds on a clock the cube's servers share, to agree on an instant (a synchronous start): virtual time in
    /// the simulator; the system's real-time clock on a real server, as close to the others' as the cube's time
    /// service keeps it. Time durations with <see cref="Now"/>.
    /// </summary>
    long ClusterTime { get; }

    /// <summary>Directory for this server's local files (chunks, map output runs, reduce output); it exists once asked for.</summary>
    string DataDirectory { get; }

    NodeCounters Counters { get; }

    FramePool Frames { get; }

    /// <summary>Runs <paramref name="callback"/> on the event loop after <paramref name="delayNs"/> nanoseconds.</summary>
    TimerHandle SetTimer(long delayNs, Action callback);

    /// <summary>Cancels a timer; cancelling one that already fired or was cancelled does nothing.</summary>
    void CancelTimer(TimerHandle timer);

    bool IsLinkUp(Port port);

    /// <summary>Free frame slots in the service's outbound queue on <paramref name="port"/>.</summary>
    int QueueSpace(byte serviceId, Port port);

    /// <summary>
    /// Asks for <see cref="IService.OnSendReady"/> on <paramref name="port"/> the next time the port hands a frame to
    /// its link and the service's queue has room (also without a refused send): a service that holds back a partly
    /// filled frame while its queue drains uses it to look again later.
    /// </summary>
    void RequestSendReady(byte serviceId, Port port);

    /// <summary>
    /// Copies a frame into the outbound queue of service <c>header.ServiceId</c> for <paramref name="port"/>.
    /// The caller fills the header (source, destination, TTL, flags); the payload length is set here.
    /// </summary>
    SendStatus TrySend(Port port, ref FrameHeader header, ReadOnlySpan<byte> key, ReadOnlySpan<byte> payload);

    /// <summary>
    /// As <see cref="TrySend(Port, ref FrameHeader, ReadOnlySpan{byte}, ReadOnlySpan{byte})"/> for a payload the
    /// caller already wrote into <paramref name="frame"/> (rented from <see cref="Frames"/>) at
    /// <see cref="FrameLayout.PayloadOffset"/>: the headers are written around it, with no copy. When queued, the
    /// frame belongs to the queue; otherwise the caller still owns it.
    /// </summary>
    SendStatus TrySend(Port port, ref FrameHeader header, ReadOnlySpan<byte> key, Frame frame, int payloadLength);

    /// <summary>
    /// Forwards the frame being delivered (zero copy, TTL decremented) into the owning service's queue on
    /// <paramref name="port"/>. Only valid during the <see cref="IService.OnFrame"/> or key-router call that received it.
    /// </summary>
    SendStatus TryForward(in InboundFrame frame, Port port);

    /// <summary>Delivers a frame built here to a service on this same server, as if it had arrived (no link used).</summary>
    void DeliverLocal(ref FrameHeader header, ReadOnlySpan<byte> key, ReadOnlySpan<byte> payload);

    /// <summary>Hands a received key-routed frame, whose destination is this server, to its service.</summary>
    void Deliver(in InboundFrame frame);

    /// <summary>What service <paramref name="serviceId"/>'s queue on <paramref name="port"/> admitted and sent so far.</summary>
    ServiceQueueCounters QueueCounters(byte serviceId, Port port);

    /// <summary>
    /// Limits service <paramref name="serviceId"/>'s frames on <paramref name="port"/> to <paramref name="bytesPerSecond"/>
    /// (0: no limit). The node's round robin enforces it: the service's queue waits for tokens, the others use the link.
    /// </summary>
    void SetRateLimit(byte serviceId, Port port, long bytesPerSecond);

    /// <summary>Service <paramref name="serviceId"/>'s rate limit on <paramref name="port"/>, bytes per second; 0 for none.</summary>
    long RateLimit(byte serviceId, Port port);

    /// <summary>The node's services, in registration order.</summary>
    IReadOnlyList<IService> Services { get; }

    T? GetService<T>()
        where T : class, IService;

    void Log(LogLevel level, string message);

    /// <summary>
    /// Runs <paramref name="work"/> off the event loop (blocking file I/O, CPU-heavy work such as a map task) and then
    /// <paramref name="then"/> on the event loop, so the loop keeps serving frames and beacons meanwhile. <paramref name="work"/>
    /// must not touch the service's state; <paramref name="then"/> may. On a real node <paramref name="work"/> runs on
    /// the thread pool; in the simulator both run inline, at no cost in virtual time.
    /// </summary>
    void RunOffLoop(Action work, Action then);

    /// <summary>
    /// Declares that the service has just done <paramref name="bytes"/> bytes of <paramref name="kind"/> work on the
    /// event loop. On a real server it does nothing (the CPU time was real); a simulator may charge it in virtual time,
    /// making this server's later events wait and its frames leave no earlier than the work ends.
    /// </summary>
    void Compute(ComputeWork kind, long bytes);
}
