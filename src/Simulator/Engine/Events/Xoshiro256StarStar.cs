using System.Numerics;

namespace Camdoop.Simulator.Events;

/// <summary>
/// xoshiro256** (Blackman and Vigna), seeded through SplitMix64. Our own implementation so that a seed gives the
/// same stream on every .NET version and platform (System.Random's algorithm is not a contract).
/// </summary>
public sealed class Xoshiro256StarStar
{
    private ulong _s0;
    private ulong _s1;
    private ulong _s2;
    private ulong _s3;

    public Xoshiro256StarStar(ulong seed)
    {
        Seed = seed;
        ulong x = seed;
        _s0 = SplitMix64(ref x);
        _s1 = SplitMix64(ref x);
        _s2 = SplitMix64(ref x);
        _s3 = SplitMix64(ref x);
    }

    public ulong Seed { get; }

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

    /// <summary>Uniform in [0, 1).</summary>
    public double NextDouble() => (NextUInt64() >> 11) * (1.0 / (1UL << 53));

    /// <summary>Uniform in [0, <paramref name="maxExclusive"/>), without modulo bias (Lemire's method).</summary>
    public int Next(int maxExclusive)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxExclusive);
        return (int)NextBelow((uint)maxExclusive);
    }

    /// <summary>Uniform in [<paramref name="minInclusive"/>, <paramref name="maxExclusive"/>).</summary>
    public int Next(int minInclusive, int maxExclusive)
    {
        if (maxExclusive <= minInclusive)
        {
            throw new ArgumentOutOfRangeException(nameof(maxExclusive), "the range is empty");
        }
        return minInclusive + (int)NextBelow((uint)((long)maxExclusive - minInclusive));
    }

    /// <summary>Uniform in [0, <paramref name="maxExclusive"/>).</summary>
    public long NextLong(long maxExclusive)
    {
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(maxExclusive);
        ulong bound = (ulong)maxExclusive;
        ulong threshold = (0 - bound) % bound;
        while (true)
        {
            ulong high = Math.BigMul(NextUInt64(), bound, out ulong low);
            if (low >= threshold)
            {
                return (long)high;
            }
        }
    }

    public bool NextBool(double probability) => NextDouble() < probability;

    public void NextBytes(Span<byte> buffer)
    {
        while (buffer.Length >= 8)
        {
            System.Buffers.Binary.BinaryPrimitives.WriteUInt64LittleEndian(buffer, NextUInt64());
            buffer = buffer[8..];
        }
        if (!buffer.IsEmpty)
        {
            ulong last = NextUInt64();
            for (int i = 0; i < buffer.Length; i++)
            {
                buffer[i] = (byte)(last >> (8 * i));
            }
        }
    }

    /// <summary>An independent generator for stream <paramref name="stream"/> of this seed (e.g. one per node).</summary>
    public Xoshiro256StarStar Fork(ulong stream)
    {
        ulong x = Seed ^ (0x9E3779B97F4A7C15UL * (stream + 1));
        return new Xoshiro256StarStar(SplitMix64(ref x));
    }

    private uint NextBelow(uint bound)
    {
        ulong product = (ulong)(uint)(NextUInt64() >> 32) * bound;
        uint low = (uint)product;
        if (low < bound)
        {
            uint threshold = (0 - bound) % bound;
            while (low < threshold)
            {
                product = (ulong)(uint)(NextUInt64() >> 32) * bound;
                low = (uint)product;
            }
        }
        return (uint)(product >> 32);
    }

    private static ulong SplitMix64(ref ulong x)
    {
        ulong z = x += 0x9E3779B97F4A7C15UL;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9UL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBUL;
        return z ^ (z >> 31);
    }
}
