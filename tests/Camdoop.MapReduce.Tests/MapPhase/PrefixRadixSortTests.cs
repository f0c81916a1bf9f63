using Camdoop.MapReduce.MapPhase;

namespace Camdoop.MapReduce.Tests.MapPhase;

public sealed class PrefixRadixSortTests
{
    public static TheoryData<int, string> Cases()
    {
        var data = new TheoryData<int, string>();
        foreach (int n in new[] { 0, 1, 2, 3, 47, 48, 49, 50, 257, 1000, 20_000 })
        {
            foreach (string shape in new[] { "random", "few", "ascii", "low-byte", "high-byte", "constant", "sorted", "reversed" })
            {
                data.Add(n, shape);
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Cases))]
    public void MatchesAStableReferenceSort(int n, string shape)
    {
        var random = new Random(n * 31 + shape.Length);
        var keys = new ulong[n];
        for (int i = 0; i < n; i++)
        {
            keys[i] = Key(shape, i, n, random);
        }
        var items = Enumerable.Range(0, n).Select(i => i * 7 + 3).ToArray();
        // Stable: equal keys keep their input order.
        var expected = keys.Zip(items).OrderBy(p => p.First).ToArray();

        var scratchKeys = new ulong[n + 5];
        var scratchItems = new int[n + 5];
        PrefixRadixSort.Sort(keys, items, scratchKeys, scratchItems);

        Assert.Equal(expected.Select(p => p.First), keys);
        Assert.Equal(expected.Select(p => p.Second), items);
    }

    [Theory]
    [InlineData(0, 1)]
    [InlineData(3, 4)]
    [InlineData(40, 4)]
    [InlineData(1000, 4)]
    [InlineData(20_000, 4)]
    [InlineData(5000, 1)]
    [InlineData(5000, 7)]
    public void SortsByTheHighBytesOnly(int n, int bytes)
    {
        var random = new Random(n + bytes);
        var keys = Enumerable.Range(0, n).Select(_ => Key("ascii", 0, n, random) ^ (ulong)random.Next(1 << 16)).ToArray();
        var items = Enumerable.Range(0, n).ToArray();
        var pairs = keys.Zip(items).ToArray();
        int shift = 64 - (8 * bytes);

        PrefixRadixSort.SortByHighBytes(keys, items, new ulong[n], new int[n], bytes);

        for (int i = 1; i < n; i++)
        {
            Assert.True(keys[i - 1] >> shift <= keys[i] >> shift);
        }
        Assert.Equal(pairs.Order(), keys.Zip(items).Order());
        Assert.Throws<ArgumentOutOfRangeException>(() => PrefixRadixSort.SortByHighBytes(keys, items, new ulong[n], new int[n], 9));
    }

    [Fact]
    public void SortsASliceInPlaceAndLeavesTheRestAlone()
    {
        var random = new Random(5);
        var keys = Enumerable.Range(0, 300).Select(_ => (ulong)random.NextInt64()).ToArray();
        var items = Enumerable.Range(0, 300).ToArray();
        var before = keys.ToArray();
        PrefixRadixSort.Sort(keys.AsSpan(100, 150), items.AsSpan(100, 150), new ulong[150], new int[150]);
        Assert.Equal(before[..100], keys[..100]);
        Assert.Equal(before[250..], keys[250..]);
        Assert.Equal(before[100..250].Order(), keys[100..250]);
        Assert.All(Enumerable.Range(100, 150), i => Assert.Equal(before[items[i]], keys[i]));
    }

    [Fact]
    public void RejectsShortScratchOrMismatchedItems()
    {
        var keys = new ulong[100];
        Assert.Throws<ArgumentException>(() => PrefixRadixSort.Sort(keys, new int[99], new ulong[100], new int[100]));
        Assert.Throws<ArgumentException>(() => PrefixRadixSort.Sort(keys, new int[100], new ulong[99], new int[100]));
        Assert.Throws<ArgumentException>(() => PrefixRadixSort.Sort(keys, new int[100], new ulong[100], new int[99]));
    }

    private static ulong Key(string shape, int i, int n, Random random) => shape switch
    {
        "random" => (ulong)random.NextInt64() ^ ((ulong)random.Next() << 63),
        "few" => (ulong)random.Next(4) * 0x0101_0101_0101_0101UL, // many equal keys
        "ascii" => AsciiPrefix(random),
        "low-byte" => 0xABCD_EF01_2345_6700UL | (uint)random.Next(256), // only one pass does anything
        "high-byte" => ((ulong)random.Next(256) << 56) | 0x42,
        "constant" => 0x8000_0000_0000_0001UL,
        "sorted" => (ulong)i * 0x0001_0203_0405_0607UL,
        "reversed" => (ulong)(n - i) * 0x0001_0203_0405_0607UL,
        _ => throw new ArgumentOutOfRangeException(nameof(shape)),
    };

    // Printable keys of 1-8 characters, zero padded, as KeyPrefix makes them.
    private static ulong AsciiPrefix(Random random)
    {
        int length = random.Next(1, 9);
        ulong prefix = 0;
        for (int b = 0; b < 8; b++)
        {
            prefix = (prefix << 8) | (b < length ? (ulong)random.Next('!', '~' + 1) : 0);
        }
        return prefix;
    }
}
