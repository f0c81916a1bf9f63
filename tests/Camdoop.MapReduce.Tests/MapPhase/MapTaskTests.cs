using System.Text;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Records;
using Camdoop.MapReduce.Tests.Support;
using Camdoop.Records;

namespace Camdoop.MapReduce.Tests.MapPhase;

public sealed class MapTaskTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-map-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private static byte[] TextInput(int seed, int bytes = 30_000) => new TextDataGenerator(1, bytes, (ulong)seed, vocabularySize: 3000).GenerateServer(0);

    [Fact]
    public void RunsAreSplitPerReduceTaskAndStripeSortedAndCombined()
    {
        IMapReduceJob job = new WordCountJob();
        var input = TextInput(1);
        var output = MapTask.Run(job, input, new MapTaskOptions { ReduceTasks = 5 });
        var all = new List<Rec>();
        for (int r = 0; r < 5; r++)
        {
            for (int s = 0; s < Stripes.Count; s++)
            {
                var records = Rec.Decode(ShufflePipeline.ReadRun(output, r, s));
                Assert.All(records, rec => Assert.Equal((r, s), (job.Partition(rec.Key, 5), Stripes.Of(rec.Key))));
                // Strictly increasing keys: sorted and every key combined into one record.
                for (int i = 1; i < records.Count; i++)
                {
                    Assert.True(records[i - 1].Key.AsSpan().SequenceCompareTo(records[i].Key) < 0);
                }
                var header = output.Header(r, s);
                Assert.Equal((records.Count, (long)records.Sum(x => x.Key.Length), (long)records.Sum(x => x.Value.Length)),
                    ((int)header.RecordCount, header.KeyBytes, header.ValueBytes));
                Assert.True(header.Combined);
                all.AddRange(records);
            }
        }
        // Together the runs hold exactly each word's count in this input.
        var expected = Latin1Words(input).GroupBy(w => w).ToDictionary(g => g.Key, g => (ulong)g.Count());
        Assert.Equal(expected.Count, all.Count);
        Assert.All(all, rec => Assert.Equal(expected[Encoding.ASCII.GetString(rec.Key)], CounterValues.Read(rec.Value)));
        Assert.Equal(input.Length, output.Stats.InputBytes);
        Assert.Equal(expected.Count, output.Stats.IntermediateRecords);
        Assert.Equal(expected.Values.Sum(c => (long)c), output.Stats.MapOutputRecords);
    }

    [Fact]
    public void StripesAndPartitionsAgreeAcrossServers()
    {
        // The same key lands in the same (reduce task, stripe) on every server.
        var job = new SyntheticJob();
        var gen = new SyntheticDataGenerator(4, 0, 5_000, 3);
        var where = new Dictionary<string, (int, int)>();
        for (int server = 0; server < 4; server++)
        {
            var output = MapTask.Run(job, gen.GenerateServer(server), new MapTaskOptions { ReduceTasks = 3 });
            for (int r = 0; r < 3; r++)
            {
                for (int s = 0; s < Stripes.Count; s++)
                {
                    foreach (var rec in Rec.Decode(output.Payload(r, s).Span))
                    {
                        string key = Convert.ToHexString(rec.Key);
                        Assert.Equal(where.TryAdd(key, (r, s)) ? (r, s) : where[key], (r, s));
                    }
                }
            }
        }
        Assert.True(where.Count > 100);
    }

    [Fact]
    public void EveryInMemoryRunCanBeLentToAMergerAndReadInPlace()
    {
        // The vertices read local runs where they lie: the map output keeps readable slack after its last run.
        var job = new SyntheticJob();
        var gen = new SyntheticDataGenerator(2, 0.5, 20_000, 7);
        var output = MapTask.Run(job, gen.GenerateServer(1), new MapTaskOptions { ReduceTasks = 2 });
        int lent = 0;
        for (int r = 0; r < 2; r++)
        {
            for (int s = 0; s < Stripes.Count; s++)
            {
                var run = output.Payload(r, s);
                var merger = new StreamMerger(job, 1, MergeMode.Combine);
                Assert.True(merger.TryLend(0, run));
                var merged = new byte[run.Length + 64];
                Assert.Equal(DrainStatus.Completed, merger.Drain(merged, out int written));
                Assert.Equal(run.ToArray(), merged.AsSpan(0, written).ToArray());
                lent += run.IsEmpty ? 0 : 1;
            }
        }
        Assert.True(lent > 6);
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void SpillingGivesTheSameRunsAsSortingInMemory(bool toFiles)
    {
        foreach (IMapReduceJob job in new IMapReduceJob[] { new WordCountJob(), new SortJob() })
        {
            var input = job is SortJob ? new SortDataGenerator(1, 60_000, 4).GenerateServer(0) : TextInput(2, 60_000);
            var inMemory = MapTask.Run(job, input, new MapTaskOptions { ReduceTasks = 2 });
            string directory = Path.Combine(_directory, job.Name);
            var spilled = MapTask.Run(job, new MemoryStream(input), new MapTaskOptions
            {
                ReduceTasks = 2,
                SortBufferBytes = 8192,
                OutputDirectory = toFiles ? directory : null,
                SpillDirectory = _directory,
            });
            Assert.Equal(0, inMemory.Stats.Spills);
            Assert.True(spilled.Stats.Spills > 5, $"expected spills, got {spilled.Stats.Spills}");
            Assert.Equal(toFiles, !spilled.InMemory);
            for (int r = 0; r < 2; r++)
            {
                for (int s = 0; s < Stripes.Count; s++)
                {
                    Assert.Equal(inMemory.Payload(r, s).ToArray(), ShufflePipeline.ReadRun(spilled, r, s));
                    Assert.Equal(inMemory.Header(r, s), spilled.Header(r, s));
                }
            }
            Assert.Equal(inMemory.Stats.EncodedBytesPerReduceTask, spilled.Stats.EncodedBytesPerReduceTask);
        }
        Assert.Empty(Directory.GetFiles(_directory, "spill-*"));
    }

    [Fact]
    public void KeysSharingTheirFirstEightBytesAreOrderedByWholeKeyThenValue()
    {
        // Keys and values over bytes that make 8-byte prefixes tie (zero bytes look like prefix padding): few
        // distinct prefixes give long runs of equal prefixes, many give short ones.
        var random = new Random(11);
        byte[] alphabet = [0x00, (byte)'a', (byte)'b', 0xFF];
        byte[] Bytes(int length) => Enumerable.Range(0, length).Select(_ => alphabet[random.Next(alphabet.Length)]).ToArray();
        var fewPrefixes = Enumerable.Range(0, 3).Select(_ => Bytes(8)).ToArray();
        var manyPrefixes = Enumerable.Range(0, 300).Select(_ => Bytes(8)).ToArray();
        var records = new List<Rec>();
        for (int i = 0; i < 3000; i++)
        {
            var key = i % 3 == 2
                ? Bytes(random.Next(0, 9)) // short keys, zero padded in their prefix
                : [.. (i % 3 == 0 ? fewPrefixes : manyPrefixes)[random.Next(i % 3 == 0 ? 3 : 300)], .. Bytes(random.Next(0, 6))];
            records.Add(new Rec(key, Bytes(random.Next(0, 3))));
        }
        var input = records.SelectMany(r => (byte[])[.. r.Key, (byte)'\t', .. r.Value, (byte)'\n']).ToArray();

        var output = MapTask.Run(new ListValuesJob(), input, new MapTaskOptions { ReduceTasks = 2 });
        var all = new List<Rec>();
        for (int r = 0; r < 2; r++)
        {
            for (int s = 0; s < Stripes.Count; s++)
            {
                var run = Rec.Decode(output.Payload(r, s).Span);
                for (int i = 1; i < run.Count; i++)
                {
                    Assert.True(Rec.CompareKeyValue(run[i - 1], run[i]) <= 0, $"run ({r}, {s}) out of order at record {i}");
                }
                all.AddRange(run);
            }
        }
        static string Text(Rec r) => Convert.ToHexString(r.Key) + "/" + Convert.ToHexString(r.Value);
        Assert.Equal(records.Select(Text).Order(), all.Select(Text).Order());
    }

    [Fact]
    public void AJobDefinedKeyOrderSortsAndCombinesEveryRun()
    {
        var random = new Random(4);
        var keys = Enumerable.Range(0, 400).Select(i => $"key-{random.Next(1000):D3}-{i % 7}").ToArray();
        var lines = Enumerable.Range(0, 5000).Select(_ => (Key: keys[random.Next(keys.Length)], Count: random.Next(1, 100))).ToList();
        var input = Encoding.ASCII.GetBytes(string.Concat(lines.Select(l => $"{l.Key}\t{l.Count}\n")));

        var output = MapTask.Run(new DescendingSumJob(), input, new MapTaskOptions { ReduceTasks = 3 });
        var sums = new Dictionary<string, ulong>();
        for (int r = 0; r < 3; r++)
        {
            for (int s = 0; s < Stripes.Count; s++)
            {
                var run = Rec.Decode(output.Payload(r, s).Span);
                for (int i = 1; i < run.Count; i++)
                {
                    Assert.True(run[i - 1].Key.AsSpan().SequenceCompareTo(run[i].Key) > 0, "strictly descending: sorted and combined");
                }
                foreach (var rec in run)
                {
                    sums.Add(Encoding.ASCII.GetString(rec.Key), CounterValues.Read(rec.Value));
                }
            }
        }
        var expected = lines.GroupBy(l => l.Key).ToDictionary(g => g.Key, g => (ulong)g.Sum(l => l.Count));
        Assert.Equal(expected.OrderBy(p => p.Key, StringComparer.Ordinal), sums.OrderBy(p => p.Key, StringComparer.Ordinal));
    }

    [Fact]
    public void OneIndexedRunFileHoldsEveryBucketWithValidHeaders()
    {
        var job = new SyntheticJob();
        var input = new SyntheticDataGenerator(2, 1, 4_000, 5).GenerateServer(0);
        string directory = RunFileLayout.MapTaskDirectory(_directory, 0xABC, 0x12);
        using var output = MapTask.Run(job, input, new MapTaskOptions { ReduceTasks = 3, JobId = 0xABC, MapTaskId = 0x12, OutputDirectory = directory });
        // One indexed file per map task, with a segment per (reduce task, stripe).
        Assert.Equal([RunFileLayout.RunFilePath(directory)], Directory.GetFiles(directory));
        using var file = IndexedRunFile.Open(output.RunFilePath!);
        Assert.Equal(18, file.Buckets);
        long records = 0;
        for (int r = 0; r < 3; r++)
        {
            for (int s = 0; s < Stripes.Count; s++)
            {
                var header = output.VerifyRun(r, s);
                Assert.Equal(header, file.Header(r * Stripes.Count + s));
                Assert.Equal((0xABCUL, 0x12UL, r, s), (header.JobId, header.MapTaskId, header.ReduceTask, header.Stripe));
                records += header.RecordCount;
            }
        }
        Assert.Equal(input.Count(b => b == '\n'), records);
        Assert.Equal(records, output.Stats.IntermediateRecords);
        Assert.Equal(output.Stats.IntermediateLogicalBytes + 2 * records, output.Stats.IntermediateEncodedBytes); // 2 header bytes each
    }

    [Fact]
    public void OversizedRecordsFailTheTaskWithAClearError()
    {
        var longWord = new byte[RecordLimits.MaxKeyBytes + 10];
        longWord.AsSpan().Fill((byte)'x');
        var error = Assert.Throws<RecordTooLargeException>(() =>
            MapTask.Run(new WordCountJob(), (byte[])[.. "short words\n"u8, .. longWord, (byte)'\n'], new MapTaskOptions { ReduceTasks = 1 }));
        Assert.Contains("wordcount", error.Message, StringComparison.Ordinal);
        Assert.Contains("65546-byte key", error.Message, StringComparison.Ordinal);

        var listJob = new ListValuesJob();
        var bigValue = Encoding.ASCII.GetBytes("k\t" + new string('v', RecordLimits.MaxValueBytes + 1) + "\n");
        var valueError = Assert.Throws<RecordTooLargeException>(() => MapTask.Run(listJob, bigValue, new MapTaskOptions { ReduceTasks = 1 }));
        Assert.Contains("map of job 'test-list'", valueError.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void BadInputsGiveClearErrors()
    {
        var partial = Assert.Throws<InvalidDataException>(() => MapTask.Run(new SortJob(), new byte[250], new MapTaskOptions { ReduceTasks = 1 }));
        Assert.Contains("partial record", partial.Message, StringComparison.Ordinal);

        var line = new byte[InputFormat.MaxLineBytes + 5];
        line.AsSpan().Fill((byte)'a');
        var tooLong = Assert.Throws<InvalidDataException>(() => MapTask.Run(new SyntheticJob(), new MemoryStream(line), new MapTaskOptions { ReduceTasks = 1 }));
        Assert.Contains("longer than", tooLong.Message, StringComparison.Ordinal);

        Assert.Throws<FileNotFoundException>(() => MapTask.Run(new SyntheticJob(), Path.Combine(_directory, "missing"), new MapTaskOptions { ReduceTasks = 1 }));
        Assert.Throws<ArgumentOutOfRangeException>(() => MapTask.Run(new SyntheticJob(), "a\n"u8.ToArray(), new MapTaskOptions { ReduceTasks = 0 }));
    }

    [Fact]
    public void MalformedLinesAreDroppedAndCounted()
    {
        var output = MapTask.Run(new TopKJob(), "a\t5\nno tab here\nb\tx\nc\t7\r\n\n"u8.ToArray(), new MapTaskOptions { ReduceTasks = 1 });
        Assert.Equal(5, output.Stats.InputRecords);
        Assert.Equal(3, output.Stats.MalformedRecords);
        Assert.Equal(2, output.Stats.MapOutputRecords);
        Assert.Equal(1, output.Stats.IntermediateRecords); // one combined top-k list
    }

    [Fact]
    public void LastLineWithoutNewlineAndCarriageReturnsAreHandled()
    {
        var output = MapTask.Run(new SyntheticJob(), "abc\r\nabc\nxyz"u8.ToArray(), new MapTaskOptions { ReduceTasks = 1 });
        var records = Enumerable.Range(0, 6).SelectMany(s => Rec.Decode(output.Payload(0, s).Span)).OrderBy(r => r.Key[0]).ToList();
        Assert.Equal(["abc", "xyz"], records.Select(r => Encoding.ASCII.GetString(r.Key)));
        Assert.Equal([2UL, 1UL], records.Select(r => CounterValues.Read(r.Value)));
    }

    internal static IEnumerable<string> Latin1Words(byte[] input) =>
        System.Text.RegularExpressions.Regex.Matches(Encoding.Latin1.GetString(input), "[A-Za-z0-9]+")
            .Select(m => m.Value.ToLowerInvariant());
}
