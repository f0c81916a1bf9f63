using Camdoop.Simulator.Events;

namespace Camdoop.Simulator.Tests.Engine;

public class Xoshiro256StarStarTests
{
    [Theory]
    // Reference values from an independent implementation of SplitMix64 seeding + xoshiro256** (Python).
    [InlineData(0UL, 0x99ec5f36cb75f2b4UL, 0xbf6e1f784956452aUL, 0x1a5f849d4933e6e0UL)]
    [InlineData(42UL, 0x15780b2e0c2ec716UL, 0x6104d9866d113a7eUL, 0xae17533239e499a1UL)]
    public void MatchesTheReferenceStream(ulong seed, ulong first, ulong second, ulong third)
    {
        var random = new Xoshiro256StarStar(seed);
        Assert.Equal(first, random.NextUInt64());
        Assert.Equal(second, random.NextUInt64());
        Assert.Equal(third, random.NextUInt64());
    }

    [Fact]
    public void BoundedDrawsStayInRangeAndCoverIt()
    {
        var random = new Xoshiro256StarStar(3);
        var counts = new int[7];
        for (int i = 0; i < 70_000; i++)
        {
            counts[random.Next(7)]++;
            int r = random.Next(-5, 5);
            Assert.InRange(r, -5, 4);
            long l = random.NextLong(1_000_000_000_000);
            Assert.InRange(l, 0, 999_999_999_999);
            double d = random.NextDouble();
            Assert.InRange(d, 0.0, 0.9999999999999999);
        }
        Assert.All(counts, c => Assert.InRange(c, 9_000, 11_000));
        Assert.Throws<ArgumentOutOfRangeException>(() => random.Next(0));
        Assert.Throws<ArgumentOutOfRangeException>(() => random.Next(3, 3));
    }

    [Fact]
    public void ForksAreReproducibleAndIndependent()
    {
        var a = new Xoshiro256StarStar(9).Fork(1);
        var b = new Xoshiro256StarStar(9).Fork(1);
        var c = new Xoshiro256StarStar(9).Fork(2);
        var d = new Xoshiro256StarStar(10).Fork(1);
        ulong va = a.NextUInt64();
        Assert.Equal(va, b.NextUInt64());
        Assert.NotEqual(va, c.NextUInt64());
        Assert.NotEqual(va, d.NextUInt64());
    }

    [Fact]
    public void NextBytesFillsEveryByte()
    {
        var random = new Xoshiro256StarStar(5);
        var buffer = new byte[1003];
        random.NextBytes(buffer);
        Assert.True(buffer.Count(b => b == 0) < 20);
        Assert.NotEqual(0, buffer[^1] | buffer[^2] | buffer[^3]);
    }
}
