using System.Runtime.CompilerServices;
using Camdoop.Runtime.Frames;
using Camdoop.Simulator.Engine;

namespace Camdoop.Simulator.Network;

// Link timing and loss: serialisation at the link rate, then propagation plus per-hop forwarding latency.
public sealed partial class Simulation
{
    private readonly long _arrivalDelay;
    private readonly long _nsPerByte;
    private readonly Xoshiro256StarStar _lossRandom;

    /// <summary>
    /// Called for every frame that finishes serialising; returning true loses it (counted as a drop). For
    /// transport tests that need one specific frame to vanish.
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

    internal void ScheduleTransmitComplete(SimulatedLink link, int frameLength) =>
        _queue.Push(_now + SerialisationTime(frameLength), SimEvent.ForLink(EventKind.TransmitComplete, link.Index, link.Epoch));

    // Every arrival is now + the same delay, so arrivals are scheduled in time order: the queue's FIFO lane.
    internal void ScheduleArrival(SimulatedLink link) =>
        _queue.PushOrdered(_now + _arrivalDelay, SimEvent.ForLink(EventKind.FrameArrival, link.Index, link.Epoch));

    internal bool ShouldDrop(SimulatedLink link, Frame frame)
    {
        double rate = link.LossRate;
        if (rate > 0 && _lossRandom.NextDouble() < rate)
        {
            return true;
        }
        var filter = DropFilter;
        return filter is not null && filter(link, frame);
    }
}
