using System.Text;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;
using Camdoop.MapReduce.Tests.MapPhase;

namespace Camdoop.MapReduce.Tests.Jobs;

/// <summary>The built-in jobs compute what they claim, checked with independent LINQ code over the raw input.</summary>
public class BuiltInJobTests
{
    private static ReferenceResult Reference(IMapReduceJob job, IEnumerable<byte[]> inputs, int reduceTasks = 1) =>
        ReferenceMapReduce.Run(job, inputs.Select(i => (ReadOnlyMemory<byte>)i).ToList(), reduceTasks);

    [Fact]
    public void WordCountCountsLowerCasedAsciiWords()
    {
        var inputs = new[] { "Hello, world! hello\r\nWORLD café x2 x2\n"u8.ToArray(), "naïve Hello\n"u8.ToArray() };
        var result = Reference(new WordCountJob(), inputs);
        var text = Encoding.ASCII.GetString(result.Format(0));
        Assert.Equal("caf\t1\nhello\t3\nna\t1\nve\t1\nworld\t2\nx2\t2\n", text);

        var gen = new TextDataGenerator(3, 20_000, 3, vocabularySize: 500);
        var big = Enumerable.Range(0, 3).Select(gen.GenerateServer).ToList();
        var counts = Reference(new WordCountJob(), big, 3).Outputs.SelectMany(o => o)
            .ToDictionary(p => Encoding.ASCII.GetString(p.Key), p => CounterValues.Read(p.Value));
        var expected = big.SelectMany(MapTaskTests.Latin1Words).GroupBy(w => w).ToDictionary(g => g.Key, g => (ulong)g.Count());
        Assert.Equal(expected.OrderBy(p => p.Key, StringComparer.Ordinal), counts.OrderBy(p => p.Key, StringComparer.Ordinal));
    }

    [Fact]
    public void TopKKeepsTheKBestLinesTiesByItem()
    {
        var gen = new TopKDataGenerator(4, 5_000, 9);
        var inputs = Enumerable.Range(0, 4).Select(gen.GenerateServer).ToList();
        inputs.Add("zeta\t999999\nalpha\t999999\n"u8.ToArray()); // a tie at the top
        var job = new TopKJob(7);
        var text = Encoding.ASCII.GetString(Reference(job, inputs).Format(0));
        var expected = inputs.SelectMany(i => Encoding.ASCII.GetString(i).Split('\n', StringSplitOptions.RemoveEmptyEntries))
            .Select(l => l.Split('\t'))
            .OrderByDescending(f => ulong.Parse(f[1], System.Globalization.CultureInfo.InvariantCulture))
            .ThenBy(f => f[0], StringComparer.Ordinal)
            .Take(7)
            .Select(f => $"{f[0]}\t{f[1]}\n");
        Assert.Equal(string.Concat(expected), text);
        Assert.StartsWith("alpha\t999999\nzeta\t999999\n", text, StringComparison.Ordinal);
    }

    [Fact]
    public void TopKMergeIsCommutativeAndAssociative()
    {
        var random = new Random(4);
        byte[] List(int n)
        {
            var entries = Enumerable.Range(0, n).Select(_ => ((ulong)random.Next(50), new[] { (byte)('a' + random.Next(26)) }))
                .OrderByDescending(e => e.Item1).ThenBy(e => e.Item2[0]).ToList();
            var bytes = new List<byte>();
            foreach (var (score, item) in entries)
            {
                var entry = new byte[TopKList.EntryLength(item.Length)];
                TopKList.WriteEntry(entry, score, item);
                bytes.AddRange(entry);
            }
            return [.. bytes];
        }
        byte[] Merge(byte[] a, byte[] b)
        {
            var dest = new byte[a.Length + b.Length];
            Assert.True(TopKList.TryMerge(a, b, 5, dest, out int written));
            return dest[..written];
        }
        for (int trial = 0; trial < 50; trial++)
        {
            var (x, y, z) = (List(random.Next(8)), List(random.Next(8)), List(random.Next(8)));
            Assert.Equal(Merge(x, y), Merge(y, x));
            Assert.Equal(Merge(Merge(x, y), z), Merge(x, Merge(y, z)));
        }
        Assert.False(TopKList.TryMerge(List(3), List(3), 5, new byte[5], out _));
    }

    [Fact]
    public void MedianIsTheLowerMedianOfEachGroup()
    {
        var input = "a\t5\na\t1\nb\t10\na\t3\na\t100\nb\t2\nbad line\n"u8.ToArray();
        var text = Encoding.ASCII.GetString(Reference(new MedianJob(), [input]).Format(0));
        Assert.Equal("a\t3\nb\t2\n", text);
    }

    [Fact]
    public void SortProducesATotalOrderAcrossReduceTasks()
    {
        var gen = new SortDataGenerator(3, 30_000, 2);
        var inputs = Enumerable.Range(0, 3).Select(gen.GenerateServer).ToList();
        var result = Reference(new SortJob(), inputs, 4);
        Assert.All(result.Outputs, o => Assert.InRange(o.Count, 150, 300)); // ~225 each: the range split is even
        var concatenated = Enumerable.Range(0, 4).SelectMany(result.Format).ToArray();
        var expected = inputs.SelectMany(i => i.Chunk(100)).OrderBy(r => r, Comparer<byte[]>.Create((a, b) => a.AsSpan().SequenceCompareTo(b))).SelectMany(r => r).ToArray();
        Assert.Equal(expected, concatenated);
    }

    [Fact]
    public void SyntheticCountsServersHoldingEachKey()
    {
        var gen = new SyntheticDataGenerator(5, 0.4, 3_000, 1);
        var inputs = Enumerable.Range(0, 5).Select(gen.GenerateServer).ToList();
        var counts = Reference(new SyntheticJob(), inputs).Outputs[0].ToDictionary(p => Encoding.ASCII.GetString(p.Key), p => CounterValues.Read(p.Value));
        var expected = inputs.SelectMany(i => Encoding.ASCII.GetString(i).Split('\n', StringSplitOptions.RemoveEmptyEntries))
            .GroupBy(k => k).ToDictionary(g => g.Key, g => (ulong)g.Count());
        Assert.Equal(expected.OrderBy(p => p.Key, StringComparer.Ordinal), counts.OrderBy(p => p.Key, StringComparer.Ordinal));
        Assert.Contains(5UL, counts.Values);
        Assert.Contains(1UL, counts.Values);
    }

    [Fact]
    public void CounterSumsSaturateInsteadOfWrapping()
    {
        var dest = new byte[8];
        Assert.True(CounterValues.TrySum32([0xFF, 0xFF, 0xFF, 0xF0], [0, 0, 0, 0x20], dest, out int w));
        Assert.Equal((4, uint.MaxValue), (w, (uint)CounterValues.Read(dest.AsSpan(0, 4))));
        Assert.False(CounterValues.TrySum64(new byte[8], new byte[8], new byte[7], out _));
    }
}
