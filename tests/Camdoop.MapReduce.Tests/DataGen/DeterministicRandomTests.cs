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
}
