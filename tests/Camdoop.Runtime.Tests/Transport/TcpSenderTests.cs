using Camdoop.Runtime.Transport.Tcp;

namespace Camdoop.Runtime.Tests.Transport;

/// <summary>The sender's state machine driven by hand: every expected window is worked out from the RFCs.</summary>
public class TcpSenderTests
{
    private const int Mss = 1000;

    /// <summary>A fake stream of a fixed length, all available at once.</summary>
    private sealed class FixedSource(long length) : ITcpStreamSource
    {
        public long Available => length;

        public bool IsComplete => true;

        public long AcknowledgedUpTo { get; private set; }

        public void Read(long offset, Span<byte> destination) => destination.Clear();

        public void Acknowledged(long offset) => AcknowledgedUpTo = offset;
    }

    private static TcpSender Sender(long length, out FixedSource source, TcpOptions? options = null)
    {
        source = new FixedSource(length);
        return new TcpSender(options ?? new TcpOptions { SegmentSize = Mss, InitialWindowSegments = 4, MinRto = 1000, InitialRto = 5000 }, source);
    }

    /// <summary>Sends every segment the window allows at <paramref name="now"/>; returns their first bytes.</summary>
    private static List<long> SendAll(TcpSender sender, long now)
    {
        var sent = new List<long>();
        while (sender.TryNext(out long seq, out int length, out bool fin))
        {
            sender.OnSent(seq, length, fin, now);
            sent.Add(seq);
        }
        return sent;
    }

    [Fact]
    public void TheInitialWindowLimitsTheFirstFlight()
    {
        var sender = Sender(100_000, out _);
        Assert.Equal([0L, 1000, 2000, 3000], SendAll(sender, 0));
        Assert.Equal(4000, sender.BytesInFlight);
        Assert.Equal(5000, sender.RtoDeadline); // the initial timeout, no sample yet
    }

    [Fact]
    public void TheReceiveWindowCapsTheFlightWhateverTheCongestionWindow()
    {
        var sender = Sender(100_000, out _, new TcpOptions { SegmentSize = Mss, InitialWindowSegments = 4, MinRto = 1000, InitialRto = 5000, ReceiveWindowBytes = 2 * Mss });
        Assert.Equal([0L, 1000], SendAll(sender, 0));
        sender.OnAck(1000, false, 0, 100);
        // One segment acknowledged frees one segment of the receiver's window, though the congestion window grew to 5.
        Assert.Equal(5 * Mss, sender.Window);
        Assert.Equal([2000L], SendAll(sender, 100));
        Assert.Equal(2 * Mss, sender.BytesInFlight);
    }

    [Fact]
    public void SlowStartGrowsTheWindowBySegmentsAcknowledged()
    {
        var sender = Sender(100_000, out var source);
        SendAll(sender, 0);
        sender.OnAck(1000, false, 0, 100);
        sender.OnAck(2000, false, 0, 100);
        Assert.Equal(6000, sender.Window); // 4 segments + 1 per segment acknowledged
        Assert.Equal(2000, source.AcknowledgedUpTo);
        Assert.Equal([4000L, 5000, 6000, 7000], SendAll(sender, 100));
    }

    [Fact]
    public void ThreeDuplicatesResendTheHoleAndHalveTheWindow()
    {
        var sender = Sender(100_000, out _);
        SendAll(sender, 0); // 0..3999 in flight
        for (int i = 0; i < 3; i++)
        {
            sender.OnAck(0, false, 0, 10); // segment 0 lost, the other three arrived
        }
        Assert.True(sender.InRecovery);
        Assert.Equal(1, sender.FastRetransmits);
        Assert.Equal(2000, sender.SlowStartThreshold); // half of 4,000 in flight
        Assert.Equal(2000 + (3 * Mss), sender.Window);
        Assert.True(sender.TryNext(out long seq, out _, out _));
        Assert.Equal(0, seq); // the hole first, whatever the window
        sender.OnSent(seq, Mss, false, 10);
        // A full acknowledgement ends recovery with min(ssthresh, flight + 1 segment): nothing is in flight now.
        sender.OnAck(4000, false, 0, 20);
        Assert.False(sender.InRecovery);
        Assert.Equal(Mss, sender.Window);
    }

    [Fact]
    public void APartialAcknowledgementResendsTheNextHole()
    {
        var sender = Sender(100_000, out _);
        SendAll(sender, 0);
        for (int i = 0; i < 3; i++)
        {
            sender.OnAck(0, false, 0, 10);
        }
        Assert.True(sender.TryNext(out long first, out _, out _));
        sender.OnSent(first, Mss, false, 10);
        sender.OnAck(2000, false, 0, 20); // segment 2 was lost too
        Assert.True(sender.InRecovery);
        Assert.True(sender.TryNext(out long second, out _, out _));
        Assert.Equal(2000, second);
    }

    [Fact]
    public void ATimeoutGoesBackToOneSegmentAndBacksOff()
    {
        var sender = Sender(100_000, out _);
        SendAll(sender, 0);
        sender.OnTimeout(5000);
        Assert.Equal(1, sender.Timeouts);
        Assert.Equal(Mss, sender.Window);
        Assert.Equal(2000, sender.SlowStartThreshold);
        Assert.Equal(10_000, sender.Rto);
        // The deadline is the backed-off timeout plus a jitter of at most a quarter of it.
        Assert.InRange(sender.RtoDeadline, 15_000, 17_500);
        Assert.Equal([0L], SendAll(sender, 5000));
        Assert.Equal(1, sender.SegmentsResent);
    }

    [Fact]
    public void TheTimeoutFollowsRoundTripSamples()
    {
        var sender = Sender(100_000, out _, new TcpOptions { SegmentSize = Mss, MinRto = 1, InitialRto = 5000 });
        SendAll(sender, 0);
        sender.OnAck(1000, false, timestampEcho: 100, now: 500); // first sample 400: srtt 400, rttvar 200
        Assert.Equal(400, sender.SmoothedRtt);
        Assert.Equal(400 + (4 * 200), sender.Rto);
    }

    [Fact]
    public void DctcpShrinksByHalfTheMarkedFraction()
    {
        var options = new TcpOptions { SegmentSize = Mss, InitialWindowSegments = 10, Dctcp = true, DctcpGain = 0.5, MinRto = 1000, InitialRto = 5000 };
        var sender = Sender(1_000_000, out _, options);
        SendAll(sender, 0);
        // The first acknowledgement closes the first window: alpha stays 1 (everything acknowledged was marked).
        // Slow start has grown the window to 11 segments; the mark shrinks it by alpha / 2, once per window.
        sender.OnAck(1000, ecnEcho: true, 0, 10);
        Assert.Equal(1.0, sender.Alpha, 6);
        Assert.Equal(5500, sender.Window);
        long after = sender.Window;
        sender.OnAck(2000, ecnEcho: true, 0, 20); // same window of data: no second reduction
        Assert.True(sender.Window >= after);
    }

    [Fact]
    public void TheStreamIsDoneWhenItsEndIsAcknowledged()
    {
        var sender = Sender(1500, out _);
        SendAll(sender, 0);
        Assert.False(sender.IsDone);
        sender.OnAck(1500, false, 0, 10); // the data, not yet the end
        Assert.False(sender.IsDone);
        sender.OnAck(1501, false, 0, 10);
        Assert.True(sender.IsDone);
        Assert.Equal(long.MaxValue, sender.RtoDeadline);
    }
}
