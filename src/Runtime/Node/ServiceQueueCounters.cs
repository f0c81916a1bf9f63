namespace Camdoop.Runtime.Node;

/// <summary>
/// One service's queue on one port: frames and bytes it admitted (originated and forwarded), frames and bytes the
/// link took from it, and frames waiting now. Counted by the node host as frames pass; reading them costs nothing.
/// </summary>
public readonly record struct ServiceQueueCounters(long FramesQueued, long BytesQueued, long FramesSent, long BytesSent, int Waiting);
