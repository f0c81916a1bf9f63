using Camdoop.Runtime.Topology;

namespace Camdoop.KeyRouting;

public enum PingOutcome : byte
{
    Replied,
    TimedOut,
}

/// <summary>How one echo went: round-trip time in nanoseconds and the hops each way (from the frames' TTLs).</summary>
public readonly record struct PingResult(Coordinate Target, PingOutcome Outcome, long RoundTripNs, int ForwardHops, int ReturnHops);
