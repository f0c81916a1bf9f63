using Camdoop.Runtime.Frames;

namespace Camdoop.Runtime.Node;

/// <summary>
/// A rate limit: a bucket of byte tokens that fills at <see cref="BytesPerSecond"/> up to <see cref="BurstBytes"/>,
/// read against the node's clock. Tokens are kept in nano-bytes (bytes x 10^9), so a refill is one exact integer
/// product and the long-run rate has no rounding drift. Not thread-safe: it lives on one node's event loop.
/// </summary>
public sealed class TokenBucket
{
    /// <summary>The highest rate a limit may name: 1 TB/s (8 Tbit/s), far above any link.</summary>
    public const long MaxBytesPerSecond = 1_000_000_000_000;

    /// <summary>The largest bucket: 1 GiB, so that tokens in nano-bytes, debt included, fit a long.</summary>
    public const long MaxBurstBytes = 1L << 30;

    private const long NanoBytesPerByte = 1_000_000_000;

    private long _tokens;
    private long _updated;

    /// <param name="bytesPerSecond">The rate, 1 byte/s to <see cref="MaxBytesPerSecond"/>.</param>
    /// <param name="now">The clock's time now (ns); the bucket starts full.</param>
    /// <param name="burstBytes">The bucket's size; 0 for <see cref="DefaultBurst"/>. At least one jumbo frame, so any frame can pass.</param>
    public TokenBucket(long bytesPerSecond, long now, long burstBytes = 0)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(bytesPerSecond, 1);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(bytesPerSecond, MaxBytesPerSecond);
        ArgumentOutOfRangeException.ThrowIfNegative(burstBytes);
        BytesPerSecond = bytesPerSecond;
        BurstBytes = burstBytes == 0 ? DefaultBurst(bytesPerSecond) : Math.Clamp(burstBytes, FrameLayout.MaxFrameSize, MaxBurstBytes);
        _tokens = BurstBytes * NanoBytesPerByte;
        _updated = now;
    }

    public long BytesPerSecond { get; }

    public long BurstBytes { get; }

    /// <summary>
    /// Two jumbo frames, or a millisecond at the rate if more: small enough that a limit holds over any window of a
    /// few milliseconds, large enough that a frame never waits for tokens a smaller one would not.
    /// </summary>
    public static long DefaultBurst(long bytesPerSecond) => Math.Max(2L * FrameLayout.MaxFrameSize, bytesPerSecond / 1000);

    /// <summary>Whole tokens (bytes) in the bucket at <paramref name="now"/>; negative while in debt.</summary>
    public long Available(long now)
    {
        Refill(now);
        return _tokens / NanoBytesPerByte;
    }

    /// <summary>Whether <paramref name="bytes"/> may pass at <paramref name="now"/>.</summary>
    public bool CanTake(int bytes, long now)
    {
        Refill(now);
        return _tokens >= bytes * NanoBytesPerByte;
    }

    /// <summary>Takes the tokens of <paramref name="bytes"/> that passed; the bucket may go into debt (it then waits longer).</summary>
    public void Take(int bytes) => _tokens -= bytes * NanoBytesPerByte;

    /// <summary>Nanoseconds from <paramref name="now"/> until <paramref name="bytes"/> may pass (0 when they may now).</summary>
    public long WaitFor(int bytes, long now)
    {
        Refill(now);
        long missing = (bytes * NanoBytesPerByte) - _tokens;
        return missing <= 0 ? 0 : (missing + BytesPerSecond - 1) / BytesPerSecond;
    }

    private void Refill(long now)
    {
        long elapsed = now - _updated;
        if (elapsed <= 0)
        {
            return;
        }
        _updated = now;
        long cap = BurstBytes * NanoBytesPerByte;
        // Past the time to fill from a full bucket's worth of debt the bucket is full: capping the interval keeps
        // the product in range.
        long fill = (2 * cap / BytesPerSecond) + 1;
        _tokens = Math.Min(cap, _tokens + (Math.Min(elapsed, fill) * BytesPerSecond));
    }
}
