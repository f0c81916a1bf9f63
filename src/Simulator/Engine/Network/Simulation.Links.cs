using System.Runtime.CompilerServices;
using Camdoop.Runtime.Frames;

namespace Camdoop.Simulator.Network;

// Link timing and loss: serialisation at the link rate, then propagation plus per-hop forwarding latency.
public sealed partial class Simulation
{
    private readonly long _nsPerByte;

    /// <summary>From the end of a frame's serialisation to its handling at the receiver: propagation plus forwarding latency.</summary>
    public long ArrivalDelay { get; }

    /// <summary>How far partitions may run ahead of each other: no frame arrives sooner than this after it left.</summary>
    public long Lookahead => ArrivalDelay;

    /// <summary>
    /// Called for every frame that finishes serialising; returning true loses it (counted as a drop). For
    /// transport tests that need one specific frame to vanish. Runs on the sending partition's thread.
    /// </summary>
    public Func<SimulatedLink, Frame, bool>? DropFilter { get; set; }

    /// <summary>Sets the random loss probability of every directed link.</summary>
    public void SetLossRate(double rate)
    {
        if (rate is < 0 or > 1 || double.IsNaN(rate))
        {
            throw new ArgumentOutOfRangeException(nameof(rate), rate, "a loss rate is a probability");
        }
        foreach (var link in _links)
        {
            link.LossRate = rate;
        }
    }

    /// <summary>Nanoseconds to put a frame of <paramref name="frameLength"/> bytes on the wire, framing overhead included (rounded up).</summary>
    [MethodImpl(MethodImplOptions.AggressiveInlining)]
    public long SerialisationTime(int frameLength)
    {
        long bytes = frameLength + _options.FramingOverheadBytes;
        return _nsPerByte != 0
            ? bytes * _nsPerByte
            : ((bytes * 8_000_000_000L) + _options.LinkRateBitsPerSecond - 1) / _options.LinkRateBitsPerSecond;
    }

    /// <summary>As <see cref="SerialisationTime"/>, at <paramref name="rateBitsPerSecond"/> instead of the link rate (a cable with its own).</summary>
    internal long SerialisationTimeAt(int frameLength, long rateBitsPerSecond)
    {
        long bytes = frameLength + _options.FramingOverheadBytes;
        return ((bytes * 8_000_000_000L) + rateBitsPerSecond - 1) / rateBitsPerSecond;
    }
}
