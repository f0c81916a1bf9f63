using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Node;

namespace Camdoop.Runtime.Tests.Node;

public class TokenBucketTests
{
    private const long Second = 1_000_000_000;

    [Fact]
    public void StartsFullAndRefillsAtItsRateUpToItsBurst()
    {
        var bucket = new TokenBucket(bytesPerSecond: 1_000_000, now: 0, burstBytes: 20_000);
        Assert.Equal(20_000, bucket.Available(0));
        bucket.Take(20_000);
        Assert.Equal(0, bucket.Available(0));
        // 1 MB/s is 1 byte per microsecond.
        Assert.Equal(5_000, bucket.Available(5_000_000));
        Assert.Equal(20_000, bucket.Available(Second));
        Assert.Equal(20_000, bucket.Available(100 * Second));
    }

    [Fact]
    public void SaysHowLongAFrameWaitsAndLetsItPassThen()
    {
        var bucket = new TokenBucket(bytesPerSecond: 3, now: 0, burstBytes: FrameLayout.MaxFrameSize);
        bucket.Take(FrameLayout.MaxFrameSize);
        Assert.False(bucket.CanTake(10, 0));
        // 10 bytes at 3 bytes/s: 3.33 s, rounded up to the nanosecond.
        long wait = bucket.WaitFor(10, 0);
        Assert.Equal(3_333_333_334, wait);
        Assert.False(bucket.CanTake(10, wait - 1));
        Assert.True(bucket.CanTake(10, wait));
        Assert.Equal(0, bucket.WaitFor(10, wait));
    }

    [Fact]
    public void DebtIsPaidBackBeforeTheNextFrame()
    {
        var bucket = new TokenBucket(bytesPerSecond: 1_000, now: 0, burstBytes: FrameLayout.MaxFrameSize);
        bucket.Take(FrameLayout.MaxFrameSize + 500);
        Assert.Equal(-500, bucket.Available(0));
        Assert.Equal((long)(0.6 * Second), bucket.WaitFor(100, 0));
    }

    [Fact]
    public void OverALongRunTheBytesThatPassAreTheRateTimesTheTimePlusTheBurst()
    {
        long rate = 6_250_000; // 50 Mbit/s
        var bucket = new TokenBucket(rate, now: 0);
        long now = 0;
        long passed = 0;
        int frame = 1_514;
        while (now < 10 * Second)
        {
            long wait = bucket.WaitFor(frame, now);
            now += wait;
            Assert.True(bucket.CanTake(frame, now));
            bucket.Take(frame);
            passed += frame;
        }
        long expected = (rate * now / Second) + bucket.BurstBytes;
        Assert.InRange(passed, expected - frame, expected + frame);
    }

    [Fact]
    public void TheDefaultBurstHoldsTwoJumboFramesOrAMillisecond()
    {
        Assert.Equal(2 * FrameLayout.MaxFrameSize, new TokenBucket(1_000, 0).BurstBytes);
        Assert.Equal(125_000, new TokenBucket(125_000_000, 0).BurstBytes);
        // A burst below a jumbo frame would block jumbo frames for ever.
        Assert.Equal(FrameLayout.MaxFrameSize, new TokenBucket(1_000, 0, burstBytes: 100).BurstBytes);
    }

    [Fact]
    public void RefusesRatesOutsideItsRange()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => new TokenBucket(0, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new TokenBucket(TokenBucket.MaxBytesPerSecond + 1, 0));
        Assert.Throws<ArgumentOutOfRangeException>(() => new TokenBucket(1_000, 0, burstBytes: -1));
        // The highest rate and the largest burst do not overflow over a long idle time.
        var bucket = new TokenBucket(TokenBucket.MaxBytesPerSecond, 0, TokenBucket.MaxBurstBytes);
        bucket.Take((int)TokenBucket.MaxBurstBytes);
        Assert.Equal(TokenBucket.MaxBurstBytes, bucket.Available(long.MaxValue / 2));
    }
}
