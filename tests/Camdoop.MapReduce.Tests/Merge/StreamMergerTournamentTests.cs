using System.Buffers.Binary;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Tests.Support;

namespace Camdoop.MapReduce.Tests.Merge;

/// <summary>
/// The tournament that selects the smallest head of a merger with many inputs (<see cref="PrefixTournament"/>):
/// it answers as the lane scans do, and a merger using it emits exactly what sorting every record would, with the
/// tournament forced on and off at every input count.
/// </summary>
public class StreamMergerTournamentTests
{
    public static TheoryData<int, bool> Counts()
    {
        var data = new TheoryData<int, bool>();
        foreach (int k in new[] { 1, 2, 7, 8, 9, 64, 512, 4096 })
        {
            data.Add(k, true);
            data.Add(k, false);
        }
        return data;
    }

    [Theory]
    [InlineData(1)]
    [InlineData(8)]
    [InlineData(9)]
    [InlineData(64)]
    [InlineData(513)]
    public void TheTournamentAnswersAsTheLaneScan(int inputs)
    {
        var random = new Random(inputs);
        var scanned = new HeadPrefixes(inputs, tournament: false);
        var tree = new HeadPrefixes(inputs, tournament: true);
        Assert.True(tree.HasTournament);
        Assert.False(scanned.HasTournament);
        for (int step = 0; step < 20_000; step++)
        {
            int input = random.Next(inputs);
            if (random.Next(5) == 0)
            {
                scanned.Clear(input);
                tree.Clear(input);
            }
            else
            {
                // Few distinct prefixes, so equal prefixes (ties) are common; now and then the "no head" value.
                ulong prefix = random.Next(10) == 0 ? ulong.MaxValue : (ulong)random.Next(inputs + 3);
                scanned.Set(input, prefix);
                tree.Set(input, prefix);
            }
            int m = scanned.ScanMin(out ulong min, out int ties);
            int treeM = tree.ScanMin(out ulong treeMin, out int treeTies);
            Assert.Equal(min, treeMin);
            Assert.Equal(m, treeM);
            Assert.Equal(ties == 1, treeTies == 1);
            int other = random.Next(inputs);
            Assert.Equal(scanned.SecondMin(m), tree.SecondMin(m));
            Assert.Equal(scanned.SecondMin(other), tree.SecondMin(other));
            var holders = new int[tree.Length];
            int count = tree.CollectEqual(min, holders);
            if (min != ulong.MaxValue)
            {
                Assert.Equal(Enumerable.Range(0, inputs).Where(i => scanned[i] == min), holders.Take(count).Order());
            }
            Assert.Equal(-1, scanned.CollectEqual(min, holders));
        }
    }

    [Fact]
    public void ManyInputsTakeTheTournamentAndFewTheScan()
    {
        Assert.False(new StreamMerger(new SumJob(), HeadPrefixes.TournamentInputs, MergeMode.Combine).UsesTournament);
        Assert.True(new StreamMerger(new SumJob(), HeadPrefixes.TournamentInputs + 1, MergeMode.Combine).UsesTournament);
        Assert.False(new StreamMerger(new SumJob(), 8, MergeMode.Merge).UsesTournament);
    }

    [Theory]
    [MemberData(nameof(Counts))]
    public void MergeEqualsSortingEverything(int k, bool tournament) => AssertMatchesOracle(k, tournament, MergeMode.Merge, seed: k);

    [Theory]
    [MemberData(nameof(Counts))]
    public void CombineEqualsSortingAndSummingEverything(int k, bool tournament) => AssertMatchesOracle(k, tournament, MergeMode.Combine, seed: k + 1);

    [Theory]
    [InlineData(9)]
    [InlineData(64)]
    [InlineData(512)]
    public void ReduceSeesEveryValueInOrder(int k)
    {
        var random = new Random(k);
        var inputs = RandomInputs(random, k);
        var outputs = new[] { true, false }.Select(tournament =>
        {
            var merger = new StreamMerger(new ListValuesJob(), k, MergeMode.Reduce, tournament, initialInputCapacity: 64);
            return Feed(merger, inputs.Select(Rec.Encode).ToList(), new Random(k));
        }).ToList();
        var expected = new List<Rec>();
        foreach (var group in SortAll(inputs).GroupBy(r => Convert.ToHexString(r.Key)))
        {
            var count = new byte[4];
            BinaryPrimitives.WriteInt32BigEndian(count, group.Count());
            expected.Add(new Rec(group.First().Key, count));
            expected.AddRange(group);
        }
        Assert.Equal(expected, Rec.Decode(outputs[0]));
        Assert.Equal(outputs[1], outputs[0]);
    }

    [Theory]
    [InlineData(9)]
    [InlineData(64)]
    [InlineData(512)]
    public void TiedKeysFoldInTheScansOrder(int k)
    {
        // A fold that shows its order: the tournament finds the inputs holding a key without the scan of every
        // live input, and must fold them in the order that scan did.
        var random = new Random(k + 2);
        var streams = RandomInputs(random, k).Select(Rec.Encode).ToList();
        var outputs = new[] { true, false }.Select(tournament =>
            Feed(new StreamMerger(new OrderedFoldJob(), k, MergeMode.Combine, tournament, initialInputCapacity: 64), streams, new Random(k))).ToList();
        Assert.Equal(outputs[1], outputs[0]);
    }

    [Theory]
    [InlineData(MergeMode.Merge, true)]
    [InlineData(MergeMode.Combine, true)]
    [InlineData(MergeMode.Combine, false)]
    public void InputsReplacedMidMergeRejoinTheTournament(MergeMode mode, bool tournament)
    {
        // 64 inputs, each key at most once an input; every few rounds some inputs' sources are replaced: the input is
        // reset (one that was exhausted joins the live inputs again) and re-fed from the record after its last
        // consumed key, as failure recovery does.
        const int k = 64;
        var random = new Random(7);
        var inputs = RandomInputs(random, k).Select(list => list.DistinctBy(r => Convert.ToHexString(r.Key)).ToList()).ToList();
        var streams = inputs.Select(Rec.Encode).ToList();
        var merger = new StreamMerger(new SumJob(), k, mode, tournament, initialInputCapacity: 64);
        var offsets = new int[k];
        var output = new List<byte>();
        var buffer = new byte[300];
        int replaced = 0;
        for (int round = 0; ; round++)
        {
            Assert.True(round < 100_000, "the merge made no progress");
            if (round % 3 == 2)
            {
                for (int n = 0; n < 4; n++)
                {
                    int i = random.Next(k);
                    int resend = 0;
                    if (merger.HasConsumed(i))
                    {
                        var last = merger.LastConsumedKey(i).ToArray();
                        int after = inputs[i].FindIndex(r => r.Key.AsSpan().SequenceEqual(last)) + 1;
                        resend = Rec.Encode(inputs[i].Take(after)).Length;
                    }
                    merger.ResetInput(i);
                    offsets[i] = resend;
                    replaced++;
                }
            }
            FeedSome(merger, streams, offsets, random);
            DrainStatus status;
            do
            {
                status = merger.Drain(buffer.AsSpan(0, random.Next(1, buffer.Length + 1)), out int written);
                output.AddRange(buffer.AsSpan(0, written));
            }
            while (status == DrainStatus.OutputFull);
            if (status == DrainStatus.Completed)
            {
                break;
            }
        }
        Assert.True(replaced > 20);
        var sorted = SortAll(inputs);
        Assert.Equal(mode == MergeMode.Merge ? sorted : Sum(sorted), Rec.Decode([.. output]));
    }

    private static void AssertMatchesOracle(int k, bool tournament, MergeMode mode, int seed)
    {
        var random = new Random(seed);
        var inputs = RandomInputs(random, k);
        var merger = new StreamMerger(new SumJob(), k, mode, tournament, initialInputCapacity: 64);
        Assert.Equal(tournament, merger.UsesTournament);
        var output = Rec.Decode(Feed(merger, inputs.Select(Rec.Encode).ToList(), random));
        var sorted = SortAll(inputs);
        var expected = mode == MergeMode.Merge ? sorted : Sum(sorted);
        Assert.Equal(expected.Count, output.Count);
        Assert.Equal(expected, output);
        Assert.Equal(sorted.Count, merger.InputRecords);
        Assert.True(merger.IsCompleted);
    }

    /// <summary>
    /// Up to 40 records an input (a quarter of them empty) over 60 keys of 0 to 13 bytes whose first six bytes are 0
    /// or 1: keys repeat within and across inputs and many share their 8-byte prefix.
    /// </summary>
    private static List<List<Rec>> RandomInputs(Random random, int inputs)
    {
        var keySpace = Enumerable.Range(0, 60).Select(_ =>
        {
            var key = new byte[random.Next(0, 14)];
            for (int b = 0; b < key.Length; b++)
            {
                key[b] = (byte)random.Next(b < 6 ? 2 : 256);
            }
            return key;
        }).ToList();
        return Enumerable.Range(0, inputs).Select(_ =>
        {
            int count = random.Next(4) == 0 ? 0 : random.Next(1, 41);
            var list = Enumerable.Range(0, count).Select(_ =>
            {
                var value = new byte[8];
                BinaryPrimitives.WriteUInt64BigEndian(value, (ulong)random.Next(1, 50));
                return new Rec(keySpace[random.Next(keySpace.Count)], value);
            }).ToList();
            list.Sort(Rec.CompareKeyValue);
            return list;
        }).ToList();
    }

    /// <summary>The oracle: every record, by key and then value (equal records are equal bytes, so input order does not show).</summary>
    private static List<Rec> SortAll(List<List<Rec>> inputs)
    {
        var all = inputs.SelectMany(x => x).ToList();
        all.Sort(Rec.CompareKeyValue);
        return all;
    }

    private static List<Rec> Sum(List<Rec> sorted) =>
        sorted.GroupBy(r => Convert.ToHexString(r.Key)).Select(g =>
        {
            var value = new byte[8];
            BinaryPrimitives.WriteUInt64BigEndian(value, g.Aggregate(0UL, (sum, r) => sum + BinaryPrimitives.ReadUInt64BigEndian(r.Value)));
            return new Rec(g.First().Key, value);
        }).ToList();

    /// <summary>
    /// Feeds the streams in rounds: each round gives about half the unfinished inputs a chunk of 1 to 40 bytes (or
    /// finishes them), so records arrive cut anywhere and inputs wait for bytes mid-merge, then drains into outputs
    /// of 1 to 300 bytes until the merger blocks. One pass over the inputs a round keeps 4,096 streams fast.
    /// </summary>
    private static byte[] Feed(StreamMerger merger, List<byte[]> streams, Random random)
    {
        var offsets = new int[streams.Count];
        var output = new List<byte>();
        var buffer = new byte[300];
        for (int round = 0; round < 100_000; round++)
        {
            FeedSome(merger, streams, offsets, random);
            while (true)
            {
                var status = merger.Drain(buffer.AsSpan(0, random.Next(1, buffer.Length + 1)), out int written);
                output.AddRange(buffer.AsSpan(0, written));
                if (status == DrainStatus.Completed)
                {
                    return [.. output];
                }
                if (status == DrainStatus.NeedsInput)
                {
                    break;
                }
            }
        }
        throw new InvalidOperationException("the merge made no progress");
    }

    /// <summary>Gives about half the unfinished inputs their next 1 to 40 bytes, and finishes those with none left.</summary>
    private static void FeedSome(StreamMerger merger, IReadOnlyList<byte[]> streams, int[] offsets, Random random)
    {
        for (int i = 0; i < streams.Count; i++)
        {
            if (merger.IsFinished(i) || random.Next(2) == 0)
            {
                continue;
            }
            int remaining = streams[i].Length - offsets[i];
            if (remaining == 0)
            {
                merger.Finish(i);
                continue;
            }
            int chunk = Math.Min(remaining, random.Next(1, 41));
            merger.Append(i, streams[i].AsSpan(offsets[i], chunk));
            offsets[i] += chunk;
        }
    }
}

/// <summary>Combines 8-byte values as left x 31 + right: a fold whose result depends on the order of its values.</summary>
internal sealed class OrderedFoldJob : IMapReduceJob
{
    public string Name => "test-ordered-fold";

    public InputFormat InputFormat => InputFormat.TextLines;

    public bool IsAssociativeCommutative => true;

    public void Map(ReadOnlySpan<byte> record, IMapEmitter output) => throw new NotSupportedException();

    public bool TryCombine(ReadOnlySpan<byte> key, ReadOnlySpan<byte> left, ReadOnlySpan<byte> right, Span<byte> destination, out int written)
    {
        ulong value = BinaryPrimitives.ReadUInt64BigEndian(left) * 31 + BinaryPrimitives.ReadUInt64BigEndian(right);
        BinaryPrimitives.WriteUInt64BigEndian(destination, value);
        written = 8;
        return true;
    }

    public void Reduce(ReadOnlySpan<byte> key, ValueList values, IRecordEmitter output) => output.Emit(key, values[0]);
}
