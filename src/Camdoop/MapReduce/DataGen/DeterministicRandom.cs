using System.Numerics;

namespace Camdoop.MapReduce.DataGen;

/// <summary>
/// xoshiro256** seeded through SplitMix64: the same (seed, stream) gives the same sequence on every machine and
/// .NET version, so generated data sets are reproducible. Streams separate independent uses of one seed.
/// </summary>
public sealed class DeterministicRandom
{
    private ulong _s0, _s1, _s2, _s3;

    public DeterministicRandom(ulong seed, ulong stream = 0)
    {
        ulong x = seed ^ (stream * 0xD1B5_4A32_D192_ED03UL);
        _s0 = SplitMix(ref x);
        _s1 = SplitMix(ref x);
        _s2 = SplitMix(ref x);
        _s3 = SplitMix(ref x);
    }

    public ulong NextUInt64()
    {
        ulong result = BitOperations.RotateLeft(_s1 * 5, 7) * 9;
        ulong t = _s1 << 17;
        _s2 ^= _s0;
        _s3 ^= _s1;
        _s1 ^= _s2;
        _s0 ^= _s3;
        _s2 ^= t;
        _s3 = BitOperations.RotateLeft(_s3, 45);
        return result;
    }

    /// <summary>Uniform in [0, maxExclusive) (multiply-high; the bias is below 2^-32 for the ranges used here).</summary>
    public int Next(int maxExclusive) => (int)Math.BigMul(NextUInt64(), (ulong)maxExclusive, out _);

    /// <summary>Uniform in [min, maxInclusive].</summary>
    public int Next(int min, int maxInclusive) => min + Next(maxInclusive - min + 1);

    /// <summary>
    /// Fills <paramref name="destination"/> with <paramref name="first"/> + uniform digits in [0, <paramref name="radix"/>),
    /// several digits per 64-bit draw: each digit is the high part of the remaining fraction times the radix, and at
    /// most <see cref="DigitsPerDraw"/> are taken from one draw, so at least 24 random bits remain behind the last
    /// (bias below 2^-24 · radix). For radix 94, one draw gives seven digits.
    /// </summary>
    public void NextDigits(Span<byte> destination, byte first, int radix)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(radix, 2);
        ArgumentOutOfRangeException.ThrowIfGreaterThan(radix, 256);
        int perDraw = DigitsPerDraw(radix);
        ulong r = (ulong)radix;
        int i = 0;
        while (i < destination.Length)
        {
            ulong x = NextUInt64();
            int end = Math.Min(destination.Length, i + perDraw);
            for (; i < end; i++)
            {
                // UInt128 rather than Math.BigMul's out parameter, which the JIT spills to the stack on every digit.
                UInt128 product = (UInt128)x * r;
                x = (ulong)product;
                destination[i] = (byte)(first + (int)(ulong)(product >> 64));
            }
        }
    }

    /// <summary>Digits <see cref="NextDigits"/> takes from one 64-bit draw: as many as leave 24 bits behind the last.</summary>
    public static int DigitsPerDraw(int radix) => DigitsPerDrawTable[radix];

    private static readonly byte[] DigitsPerDrawTable = Enumerable.Range(0, 257)
        .Select(r => (byte)(r < 2 ? 0 : Math.Max(1, (int)((64 - 24) / Math.Log2(r)) + 1))).ToArray();

    public double NextDouble() => (NextUInt64() >> 11) * (1.0 / (1UL << 53));

    public void NextBytes(Span<byte> destination)
    {
        for (int i = 0; i < destination.Length; i++)
        {
            destination[i] = (byte)(NextUInt64() >> 56);
        }
    }

    private static ulong SplitMix(ref ulong x)
    {
        ulong z = x += 0x9E37_79B9_7F4A_7C15UL;
        z = (z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D0_49BB_1331_11EBUL;
        return z ^ (z >> 31);
    }
}
