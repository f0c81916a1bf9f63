namespace Camdoop.Simulator.Network;

/// <summary>
/// Traffic on one directed link or summed over many. Frames and bytes count frames that finished serialising
/// (frame bytes, without the framing overhead); busy time includes the overhead; drops are frames lost for any
/// reason (random loss, drop filter, failed link or server, dead receiver).
/// </summary>
public readonly record struct LinkStats(long Frames, long Bytes, long BusyTime, long Drops)
{
    public static LinkStats operator +(LinkStats a, LinkStats b) =>
        new(a.Frames + b.Frames, a.Bytes + b.Bytes, a.BusyTime + b.BusyTime, a.Drops + b.Drops);

    /// <summary>Fraction of <paramref name="elapsed"/> nanoseconds the link spent serialising (per link; a sum over n links gives up to n).</summary>
    public double Utilisation(long elapsed) => elapsed <= 0 ? 0 : BusyTime / (double)elapsed;
}
