using Camdoop.MapReduce.DataGen;

namespace Camdoop.MapReduce.Tests.DataGen;

public sealed class DeterministicRandomTests
{
    [Theory]
    [InlineData(94)]
    [InlineData(10)]
    [InlineData(256)]
    [InlineData(2)]
    public void NextDigitsAreUniformInRangeAndReproducible(int radix)
    {
        var a = new DeterministicRandom(11, 5);
        var b = new DeterministicRandom(11, 5);
        var counts = new long[radix];
        byte first = (byte)Math.Min(3, 256 - radix);
        int total = 0;
        foreach (int length in new[] { 0, 1, 6, 7, 8, 19, 1000, 30_000 })
        {
            var x = new byte[length];
            var y = new byte[length];
            a.NextDigits(x, first, radix);
            b.NextDigits(y, first, radix);
            Assert.Equal(x, y);
            foreach (byte v in x)
            {
                Assert.InRange(v - first, 0, radix - 1);
                counts[v - first]++;
            }
            total += length;
        }
        // Chi-square against uniform: far below what a biased or stuck digit would give (p < 1e-6 bound, loose).
        double expected = (double)total / radix;
        double chi = counts.Sum(c => (c - expected) * (c - expected) / expected);
        Assert.True(chi < radix + (10 * Math.Sqrt(2.0 * radix)), $"chi-square {chi:F1} for {radix - 1} degrees of freedom");
        // Later digits of one draw are as uniform as the first: digit 7 of each 7-digit block (radix 94).
        if (radix == 94)
        {
            var r = new DeterministicRandom(1, 1);
            var last = new long[radix];
            var block = new byte[7];
            for (int i = 0; i < 94_000; i++)
            {
                r.NextDigits(block, 0, radix);
                last[block[6]]++;
            }
            double e = 94_000.0 / radix;
            Assert.True(last.Sum(c => (c - e) * (c - e) / e) < radix + (10 * Math.Sqrt(2.0 * radix)));
        }
        Assert.Throws<ArgumentOutOfRangeException>(() => a.NextDigits(new byte[1], 0, 1));
        Assert.Throws<ArgumentOutOfRangeException>(() => a.NextDigits(new byte[1], 0, 257));
    }

    [Theory]
    [InlineData(94)]
    [InlineData(10)]
    [InlineData(256)]
    [InlineData(2)]
    public void DigitsAreEachDrawMultipliedOutOneDigitAtATime(int radix)
    {
        // The definition every generated data set (and so every committed figure) was made with: multiply the draw by
        // the radix, the high word is the digit, the low word goes on to the next one.
        var digits = new DeterministicRandom(3, 9);
        var draws = new DeterministicRandom(3, 9);
        byte first = (byte)Math.Min('!', 256 - radix);
        int perDraw = DeterministicRandom.DigitsPerDraw(radix);
        foreach (int length in new[] { 1, perDraw - 1, perDraw, perDraw + 1, (3 * perDraw) + 2, 1000 })
        {
            var actual = new byte[length];
            digits.NextDigits(actual, first, radix);
            var expected = new byte[length];
            int i = 0;
            while (i < length)
            {
                ulong x = draws.NextUInt64();
                for (int k = 0; k < perDraw && i < length; k++, i++)
                {
                    ulong high = Math.BigMul(x, (ulong)radix, out x);
                    expected[i] = (byte)(first + (int)high);
                }
            }
            Assert.Equal(expected, actual);
        }
    }
}
