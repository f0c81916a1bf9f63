using System.Buffers.Binary;
using Camdoop.MapReduce.Buffers;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Shuffle;
using Camdoop.MapReduce.Tests.Support;
using Camdoop.Records;
using Camdoop.Tests.Shared;

namespace Camdoop.MapReduce.Tests.Merge;

public class StreamMergerTests
{
    /// <summary>K sorted inputs over a small key space (so keys repeat across and within inputs), 8-byte values.</summary>
    private static List<List<Rec>> RandomInputs(Random random, int inputs, int maxRecords, bool longKeys = false)
    {
        var keySpace = Enumerable.Range(0, 40).Select(i =>
        {
            // Keys share prefixes, differ in length, some longer than the 8-byte prefix, some empty.
            int length = longKeys ? random.Next(0, 200) : random.Next(0, 14);
            var key = new byte[length];
            for (int b = 0; b < length; b++)
            {
                key[b] = (byte)random.Next(b < 6 ? 2 : 256);
            }
            return key;
        }).ToList();
        return Enumerable.Range(0, inputs).Select(_ =>
        {
            int count = random.Next(4) == 0 ? 0 : random.Next(1, maxRecords + 1);
            var list = new List<Rec>();
            for (int i = 0; i < count; i++)
            {
                var value = new byte[8];
                BinaryPrimitives.WriteUInt64BigEndian(value, (ulong)random.Next(1, 1000));
                list.Add(new Rec(keySpace[random.Next(keySpace.Count)], value));
            }
            list.Sort(Rec.CompareKeyValue);
            return list;
        }).ToList();
    }

    /// <summary>
    /// <paramref name="k"/> sorted inputs over <paramref name="keySpace"/>, 8-byte values: input 0 dense
    /// (<paramref name="denseRecords"/> records), the others sparse (0 to <paramref name="maxSparseRecords"/>).
    /// </summary>
    private static List<List<Rec>> DenseBesideSparse(Random random, List<byte[]> keySpace, int k, int denseRecords, int maxSparseRecords) =>
        Enumerable.Range(0, k).Select(i =>
        {
            int count = i == 0 ? denseRecords : random.Next(0, maxSparseRecords + 1);
            var list = Enumerable.Range(0, count).Select(_ =>
            {
                var value = new byte[8];
                BinaryPrimitives.WriteUInt64BigEndian(value, (ulong)random.Next(1, 1000));
                return new Rec(keySpace[random.Next(keySpace.Count)], value);
            }).ToList();
            list.Sort(Rec.CompareKeyValue);
            return list;
        }).ToList();

    /// <summary>What a merger in <paramref name="mode"/> must output for <paramref name="inputs"/>.</summary>
    private static List<Rec> Naive(MergeMode mode, List<List<Rec>> inputs) => mode == MergeMode.Merge ? NaiveMerge(inputs) : NaiveCombine(inputs);

    /// <summary>
    /// A seeded case of the pool tests: <c>minInputs</c>..7 random inputs, their streams, the expected output, and a
    /// merger whose inputs start on 16-byte buffers from a fresh pool.
    /// </summary>
    private static (Random Random, int K, List<byte[]> Encoded, List<Rec> Expected, ShuffleBufferPool Pool, StreamMerger Merger) PooledCase(
        int seed, int minInputs, MergeMode mode, bool longKeys)
    {
        var random = new Random(seed);
        int k = random.Next(minInputs, 8);
        var inputs = RandomInputs(random, k, 200, longKeys);
        var pool = new ShuffleBufferPool();
        return (random, k, inputs.Select(Rec.Encode).ToList(), Naive(mode, inputs), pool,
            new StreamMerger(new SumJob(), k, mode, initialInputCapacity: 16, bufferPool: pool));
    }

    /// <summary>Resets and trims <paramref name="merger"/>: each of its <paramref name="k"/> inputs then holds one smallest-class buffer of the pool.</summary>
    private static void AssertTrimmedBackToOneSmallBufferEach(StreamMerger merger, ShuffleBufferPool pool, int k)
    {
        merger.Reset();
        merger.TrimBuffers(16);
        Assert.Equal(k * 512, pool.RentedBytes);
    }

    private static List<Rec> NaiveMerge(List<List<Rec>> inputs)
    {
        var all = inputs.SelectMany(x => x).ToList();
        all.Sort(Rec.CompareKeyValue);
        return all;
    }

    private static List<Rec> NaiveCombine(List<List<Rec>> inputs) =>
        inputs.SelectMany(x => x)
            .GroupBy(r => Convert.ToHexString(r.Key))
            .Select(g =>
            {
                var value = new byte[8];
                BinaryPrimitives.WriteUInt64BigEndian(value, g.Aggregate(0UL, (sum, r) => sum + BinaryPrimitives.ReadUInt64BigEndian(r.Value)));
                return new Rec(g.First().Key, value);
            })
            .OrderBy(r => r.Key, Comparer<byte[]>.Create((a, b) => a.AsSpan().SequenceCompareTo(b)))
            .ToList();

    /// <summary>
    /// A Merge-mode merger that ran to completion: its output is every input record in order, it counted each record
    /// once in and once out, and it remembers the last key emitted and each input's last key consumed.
    /// </summary>
    private static void AssertMergedExactly(StreamMerger merger, List<List<Rec>> inputs, List<Rec> output)
    {
        var expected = NaiveMerge(inputs);
        Assert.Equal(expected, output);
        Assert.Equal(expected.Count, merger.InputRecords);
        Assert.Equal(expected.Count, merger.OutputRecords);
        if (expected.Count > 0)
        {
            Assert.Equal(expected[^1].Key, merger.LastEmittedKey.ToArray());
        }
        for (int i = 0; i < inputs.Count; i++)
        {
            Assert.Equal(inputs[i].Count > 0, merger.HasConsumed(i));
            if (inputs[i].Count > 0)
            {
                Assert.Equal(inputs[i][^1].Key, merger.LastConsumedKey(i).ToArray());
            }
        }
    }

    public static TheoryData<int> Seeds => new() { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };

    [Theory]
    [MemberData(nameof(Seeds))]
    public void MergeModeEqualsSortedConcatenation(int seed)
    {
        var random = new Random(seed);
        int k = random.Next(1, 8);
        var inputs = RandomInputs(random, k, 60, longKeys: seed % 3 == 0);
        var merger = new StreamMerger(new SumJob(), k, MergeMode.Merge, initialInputCapacity: 16);
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random));
        AssertMergedExactly(merger, inputs, output);
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public void MergeModeKeepsValueOrderInLongRunsOfOneKeyAcrossInputs(int seed)
    {
        // As on a tree at S = 0 without aggregation: every input repeats each of a few keys many times, with values
        // from a small set, so heads tie on key and value and one input's run must stop where another's value is lower.
        var random = new Random(400 + seed);
        int k = random.Next(2, 8);
        var keys = new[] { "alpha", "alphabetically", "b" }.Select(System.Text.Encoding.ASCII.GetBytes).ToArray();
        var inputs = Enumerable.Range(0, k).Select(_ =>
        {
            var list = new List<Rec>();
            foreach (var key in keys)
            {
                int count = random.Next(0, 40);
                for (int i = 0; i < count; i++)
                {
                    var value = new byte[4];
                    BinaryPrimitives.WriteUInt32BigEndian(value, (uint)random.Next(1, 4));
                    list.Add(new Rec(key, value));
                }
            }
            list.Sort(Rec.CompareKeyValue);
            return list;
        }).ToList();
        var merger = new StreamMerger(new SumJob(), k, MergeMode.Merge, initialInputCapacity: 16);
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random));
        var expected = NaiveMerge(inputs);
        Assert.Equal(expected, output);
        Assert.Equal(expected.Count, merger.OutputRecords);
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public void MergeModeCopiesRepeatedRecordsInBlocksYetCountsAndTracksKeysExactly(int seed)
    {
        // Exactly S = 0 without aggregation: every input holds each key with value 1, repeated once per server below
        // it, so whole runs of byte-identical records move in one block, cut by the output's room and the input's end.
        // Keys of 1 to 40 bytes: records up to and past the 32 bytes one vector compare covers.
        var random = new Random(500 + seed);
        int k = random.Next(2, 8);
        var keys = Enumerable.Range(0, 12).Select(i => System.Text.Encoding.ASCII.GetBytes(new string((char)('a' + i), 1 + (i * 7 % 40)))).ToArray();
        var one = new byte[4];
        BinaryPrimitives.WriteUInt32BigEndian(one, 1);
        var inputs = Enumerable.Range(0, k).Select(_ =>
            keys.SelectMany(key => Enumerable.Repeat(new Rec(key, one), random.Next(0, 120))).OrderBy(r => r, Comparer<Rec>.Create(Rec.CompareKeyValue)).ToList()).ToList();
        var merger = new StreamMerger(new SumJob(), k, MergeMode.Merge, initialInputCapacity: 16);
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random, maxChunk: 200, maxOutput: 400));
        AssertMergedExactly(merger, inputs, output);
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public void CombineModeFoldsEveryKeyExactlyOnce(int seed)
    {
        var random = new Random(100 + seed);
        int k = random.Next(1, 8);
        var inputs = RandomInputs(random, k, 60, longKeys: seed % 3 == 0);
        var merger = new StreamMerger(new SumJob(), k, MergeMode.Combine, initialInputCapacity: 16);
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random));
        var expected = NaiveCombine(inputs);
        Assert.Equal(expected, output);
        if (expected.Count > 0)
        {
            Assert.Equal(expected[^1].Key, merger.LastEmittedKey.ToArray());
        }
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public void ReduceModeOfAnAssociativeJobFoldsThenReduces(int seed)
    {
        var random = new Random(200 + seed);
        int k = random.Next(1, 8);
        var inputs = RandomInputs(random, k, 40);
        var merger = new StreamMerger(new SumJob(), k, MergeMode.Reduce, initialInputCapacity: 16);
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random));
        Assert.Equal(NaiveCombine(inputs), output);
    }

    [Theory]
    [MemberData(nameof(Seeds))]
    public void ReduceModeOfANonAssociativeJobSeesEveryValueInAscendingOrder(int seed)
    {
        var random = new Random(300 + seed);
        int k = random.Next(1, 8);
        var inputs = RandomInputs(random, k, 40);
        var job = new ListValuesJob();
        var merger = new StreamMerger(job, k, MergeMode.Reduce, initialInputCapacity: 16);
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random));

        var expected = new List<Rec>();
        foreach (var group in NaiveMerge(inputs).GroupBy(r => Convert.ToHexString(r.Key)))
        {
            var count = new byte[4];
            BinaryPrimitives.WriteInt32BigEndian(count, group.Count());
            expected.Add(new Rec(group.First().Key, count));
            expected.AddRange(group);
        }
        Assert.Equal(expected, output);
    }

    /// <summary>
    /// One dense input beside sparse ones, as on a tree near its root: long runs come from the dense input, bounded
    /// by the sparse inputs' heads, including heads that share the run's 8-byte prefix but not its key.
    /// </summary>
    [Theory]
    [MemberData(nameof(Seeds))]
    public void ADenseInputBesideSparseOnesMergesAndCombinesExactly(int seed)
    {
        var random = new Random(300 + seed);
        // 600 keys; half of them share the 8-byte prefix "prefix00" and differ after it, so runs end on ties.
        var keySpace = Enumerable.Range(0, 600).Select(i =>
        {
            var tail = new byte[random.Next(0, 6)];
            random.NextBytes(tail);
            byte[] head = i % 2 == 0 ? "prefix00"u8.ToArray() : BitConverter.GetBytes(random.NextInt64());
            return head.Concat(tail).ToArray();
        }).ToList();
        int k = random.Next(2, seed % 4 == 0 ? 12 : 8);
        var inputs = DenseBesideSparse(random, keySpace, k, denseRecords: 3000, maxSparseRecords: 24);
        var encoded = inputs.Select(Rec.Encode).ToList();

        var merger = new StreamMerger(new SumJob(), k, MergeMode.Merge, initialInputCapacity: 64);
        Assert.Equal(NaiveMerge(inputs), Rec.Decode(MergeDriver.Run(merger, encoded, random)));
        var combiner = new StreamMerger(new SumJob(), k, MergeMode.Combine, initialInputCapacity: 64);
        Assert.Equal(NaiveCombine(inputs), Rec.Decode(MergeDriver.Run(combiner, encoded, random)));
    }

    /// <summary>
    /// Inputs of similar size whose keys interleave at random, as at a reducer or a vertex far from the leaves: most
    /// runs are a record or two long, so the merge keeps moving from one input to the next (the fast path's switch
    /// to the sole holder of the next-smallest prefix). Keys are the synthetic job's 4-28 printable characters; some
    /// are on every input (ties to fold), some on two inputs, the rest on one.
    /// </summary>
    [Theory]
    [MemberData(nameof(Seeds))]
    public void InputsInterleavingRecordByRecordMergeAndCombineExactly(int seed)
    {
        var random = new Random(700 + seed);
        int k = random.Next(2, 9);
        byte[] RandomKey()
        {
            var key = new byte[random.Next(4, 29)];
            for (int b = 0; b < key.Length; b++)
            {
                key[b] = (byte)random.Next('!', '~' + 1);
            }
            return key;
        }
        var common = Enumerable.Range(0, 40).Select(_ => RandomKey()).ToList();
        var inputs = Enumerable.Range(0, k).Select(_ => new List<Rec>()).ToList();
        foreach (var key in common)
        {
            foreach (var input in inputs)
            {
                input.Add(new Rec(key, Value(random.Next(1, 1000))));
            }
        }
        for (int i = 0; i < 1500; i++)
        {
            var key = RandomKey();
            inputs[random.Next(k)].Add(new Rec(key, Value(random.Next(1, 1000))));
            if (random.Next(10) == 0)
            {
                inputs[random.Next(k)].Add(new Rec(key, Value(random.Next(1, 1000))));
            }
        }
        foreach (var input in inputs)
        {
            input.Sort(Rec.CompareKeyValue);
        }
        var encoded = inputs.Select(Rec.Encode).ToList();

        var merger = new StreamMerger(new SumJob(), k, MergeMode.Merge, initialInputCapacity: 64);
        var merged = Rec.Decode(MergeDriver.Run(merger, encoded, random, maxChunk: 512, maxOutput: 1024));
        AssertMergedExactly(merger, inputs, merged);
        var combiner = new StreamMerger(new SumJob(), k, MergeMode.Combine, initialInputCapacity: 64);
        Assert.Equal(NaiveCombine(inputs), Rec.Decode(MergeDriver.Run(combiner, encoded, random, maxChunk: 512, maxOutput: 1024)));

        static byte[] Value(int count)
        {
            var value = new byte[8];
            BinaryPrimitives.WriteUInt64BigEndian(value, (ulong)count);
            return value;
        }
    }

    [Theory]
    [InlineData(MergeMode.Merge)]
    [InlineData(MergeMode.Combine)]
    [InlineData(MergeMode.Reduce)]
    public void MoreThanEightInputsTakeTheScalarPath(MergeMode mode)
    {
        var random = new Random(500 + (int)mode);
        var inputs = RandomInputs(random, 12, 50);
        var merger = new StreamMerger(new SumJob(), 12, mode, initialInputCapacity: 16);
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random, maxChunk: 200, maxOutput: 300));
        Assert.Equal(Naive(mode, inputs), output);
    }

    [Theory]
    [InlineData(MergeMode.Merge)]
    [InlineData(MergeMode.Combine)]
    [InlineData(MergeMode.Reduce)]
    public void KeysStartingWithEightFFBytesAreNotMistakenForEndedInputs(MergeMode mode)
    {
        // Their prefix equals the marker of an exhausted input, so every step takes the general path.
        var random = new Random(600 + (int)mode);
        var inputs = RandomInputs(random, 6, 40)
            .Select(list => list.Select(r => new Rec([.. Enumerable.Repeat((byte)0xFF, 8), .. r.Key], r.Value)).ToList())
            .ToList();
        inputs[0].Insert(0, Rec.Of("plain", 5)); // one ordinary key, smaller than all the others
        var merger = new StreamMerger(new SumJob(), inputs.Count, mode, initialInputCapacity: 16);
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random));
        Assert.Equal(Naive(mode, inputs), output);
    }

    /// <summary>
    /// A dense input beside sparse ones in buffers too small to hold all it is fed: when a buffer fills, the input
    /// wraps around to the room its consumed records left instead of moving its unconsumed bytes, and the record the
    /// wrap cut is joined up when the merge reaches it. With <paramref name="longKeys"/>, keys of up to 1,500 bytes
    /// make cut records longer than the room kept for joining them in place, so some are joined at the end of a Drain.
    /// </summary>
    [Theory]
    [InlineData(MergeMode.Merge, false, 1)]
    [InlineData(MergeMode.Combine, false, 2)]
    [InlineData(MergeMode.Reduce, false, 3)]
    [InlineData(MergeMode.Merge, true, 4)]
    [InlineData(MergeMode.Combine, true, 5)]
    [InlineData(MergeMode.Reduce, true, 6)]
    public void InputsWrapAroundTheirBuffersAndStillMergeExactly(MergeMode mode, bool longKeys, int seed)
    {
        long wraps = 0, deferred = 0;
        for (int round = 0; round < 6; round++)
        {
            var random = new Random(1900 + (seed * 100) + round);
            var keySpace = Enumerable.Range(0, 300).Select(_ =>
            {
                var key = new byte[longKeys && random.Next(3) == 0 ? random.Next(500, 1500) : random.Next(1, 40)];
                random.NextBytes(key);
                return key;
            }).ToList();
            int k = random.Next(2, 8);
            var inputs = DenseBesideSparse(random, keySpace, k, denseRecords: 1500, maxSparseRecords: 59);
            var merger = new StreamMerger(new SumJob(), k, mode, initialInputCapacity: longKeys ? 16 * 1024 : 2048);
            var output = MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random, maxChunk: longKeys ? 1200 : 400, maxOutput: 600);
            Assert.Equal(Naive(mode, inputs), Rec.Decode(output));
            wraps += merger.Wraps;
            deferred += merger.DeferredUnwraps;
        }
        Assert.True(wraps > 0, "no input wrapped around its buffer");
        if (longKeys)
        {
            Assert.True(deferred > 0, "no long cut record was joined at the end of a Drain");
        }
    }

    [Theory]
    [InlineData(MergeMode.Merge, 1)]
    [InlineData(MergeMode.Combine, 2)]
    [InlineData(MergeMode.Combine, 3)]
    public void ReservingRoomMidStreamKeepsTheBufferedBytesAndKeys(MergeMode mode, int seed)
    {
        var random = new Random(500 + seed);
        int k = random.Next(2, 8);
        var inputs = RandomInputs(random, k, 80, longKeys: seed == 3);
        var merger = new StreamMerger(new SumJob(), k, mode, initialInputCapacity: 16);
        int reserved = 0;
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random, betweenDrains: m =>
        {
            if (random.Next(4) == 0)
            {
                int input = random.Next(k);
                var lastKey = m.HasConsumed(input) ? m.LastConsumedKey(input).ToArray() : null;
                int buffered = m.BufferedBytes(input);
                m.Reserve(input, random.Next(0, 2) == 0 ? random.Next(0, 64) : 16 << random.Next(1, 8));
                reserved++;
                Assert.Equal(buffered, m.BufferedBytes(input));
                if (lastKey is not null)
                {
                    Assert.Equal(lastKey, m.LastConsumedKey(input).ToArray());
                }
            }
        }));
        Assert.True(reserved > 0);
        Assert.Equal(Naive(mode, inputs), output);
    }

    [Theory]
    [InlineData(MergeMode.Merge, 1)]
    [InlineData(MergeMode.Combine, 2)]
    [InlineData(MergeMode.Combine, 3)]
    public void InputBuffersFromAPoolGrowThereAndAreTrimmedBackToIt(MergeMode mode, int seed)
    {
        var (random, k, encoded, expected, pool, merger) = PooledCase(900 + seed, minInputs: 2, mode, longKeys: seed == 3);
        Assert.Equal(k * 512, pool.RentedBytes); // one buffer of the smallest class per input
        for (int round = 0; round < 3; round++)
        {
            long grown = 0;
            var output = Rec.Decode(MergeDriver.Run(merger, encoded, random, maxChunk: 400, betweenDrains: m =>
            {
                grown = Math.Max(grown, pool.RentedBytes);
                if (random.Next(6) == 0)
                {
                    m.Reserve(random.Next(k), 16 << random.Next(1, 8));
                }
            }));
            Assert.Equal(expected, output);
            Assert.True(grown > k * 512, "the inputs grew with buffers from the pool");
            AssertTrimmedBackToOneSmallBufferEach(merger, pool, k); // what they grew to went back
            Assert.True(pool.FreeBytes > 0);
        }
    }

    [Theory]
    [InlineData(MergeMode.Merge, 1)]
    [InlineData(MergeMode.Combine, 2)]
    [InlineData(MergeMode.Combine, 3)]
    public void LentStreamsAreReadInPlaceNeverWrittenAndNeverPooled(MergeMode mode, int seed)
    {
        var (random, k, encoded, expected, pool, merger) = PooledCase(1300 + seed, minInputs: 3, mode, longKeys: seed == 3);
        for (int round = 0; round < 3; round++)
        {
            // About half the inputs are lent from inside larger arrays: random bytes before the stream, and after it
            // the slack and more random bytes, as another run's bytes follow a run in a map output.
            var lent = new List<(byte[] Array, byte[] Before)>();
            for (int i = 0; i < k; i++)
            {
                if (random.Next(2) == 0)
                {
                    continue;
                }
                int before = random.Next(0, 40);
                var array = new byte[before + encoded[i].Length + StreamMerger.LendSlackBytes + random.Next(0, 40)];
                random.NextBytes(array);
                encoded[i].CopyTo(array, before);
                Assert.True(merger.TryLend(i, array.AsMemory(before, encoded[i].Length)));
                Assert.True(merger.IsFinished(i));
                Assert.Equal(encoded[i].Length, merger.BufferedBytes(i));
                lent.Add((array, (byte[])array.Clone()));
            }
            var output = Rec.Decode(MergeDriver.Run(merger, encoded, random, maxChunk: 300, betweenDrains: m =>
            {
                if (random.Next(8) == 0)
                {
                    m.Reserve(random.Next(k), 16 << random.Next(1, 8)); // a lent input ignores it
                }
            }));
            Assert.Equal(expected, output);
            Assert.All(lent, l => Assert.Equal(l.Before, l.Array));
            Assert.Equal(encoded.Sum(e => (long)e.Length), merger.InputBytes);
            // Every input is back on its own buffer, and no lent array went into the pool.
            AssertTrimmedBackToOneSmallBufferEach(merger, pool, k);
        }
    }

    [Fact]
    public void LendingIsRefusedWithoutSlackOrOnAnInputAlreadyFed()
    {
        var merger = new StreamMerger(new SumJob(), 2, MergeMode.Merge, initialInputCapacity: 64);
        var first = Rec.Encode([Rec.Of("a", 1), Rec.Of("c", 1)]);
        var second = Rec.Encode([Rec.Of("b", 1), Rec.Of("d", 1)]);
        // Exactly sized: nothing readable past the stream.
        Assert.False(merger.TryLend(0, first));
        Assert.False(merger.IsFinished(0));
        var padded = new byte[first.Length + StreamMerger.LendSlackBytes];
        first.CopyTo(padded, 0);
        Assert.False(merger.TryLend(0, padded.AsMemory(0, first.Length + 1))); // the slack must follow the stream
        merger.Append(1, second.AsSpan(0, 3));
        Assert.False(merger.TryLend(1, padded.AsMemory(0, first.Length))); // input 1 holds bytes already
        Assert.True(merger.TryLend(0, padded.AsMemory(0, first.Length)));
        Assert.False(merger.TryLend(0, padded.AsMemory(0, first.Length))); // finished
        var snapshot = (byte[])padded.Clone();
        // Failure recovery re-feeds a lent input from its own buffer, never into the lent array.
        merger.ResetInput(0);
        merger.Append(0, first);
        merger.Finish(0);
        merger.Append(1, second.AsSpan(3));
        merger.Finish(1);
        var output = new byte[256];
        Assert.Equal(DrainStatus.Completed, merger.Drain(output, out int written));
        Assert.Equal(["a", "b", "c", "d"], Keys(output.AsSpan(0, written)));
        Assert.Equal(snapshot, padded);
    }

    [Theory]
    [InlineData(MergeMode.Merge, 1)]
    [InlineData(MergeMode.Combine, 2)]
    [InlineData(MergeMode.Combine, 3)]
    public void AdoptedStashesAreMergedWithoutACopyAndGoBackToThePool(MergeMode mode, int seed)
    {
        var (random, k, encoded, expected, pool, merger) = PooledCase(1400 + seed, minInputs: 3, mode, longKeys: seed == 3);
        for (int round = 0; round < 3; round++)
        {
            // About half the inputs start with a stash: any prefix of the stream (records cut anywhere), in a buffer
            // of the pool with the slack a stash keeps; the driver appends the rest.
            var fed = new int[k];
            for (int i = 0; i < k; i++)
            {
                if (random.Next(2) == 0 || encoded[i].Length == 0)
                {
                    continue;
                }
                int length = random.Next(1, encoded[i].Length + 1);
                var stash = pool.Rent(length + InboundStream.StashSlackBytes);
                encoded[i].AsSpan(0, length).CopyTo(stash);
                long rented = pool.RentedBytes;
                int own = ShuffleBufferPool.SizeFor(16 + StreamMerger.LendSlackBytes);
                Assert.True(merger.TryAdopt(i, stash, length));
                Assert.Equal(length, merger.BufferedBytes(i));
                Assert.False(merger.IsFinished(i));
                Assert.Equal(rented - own, pool.RentedBytes); // the input's own buffer went back to the pool
                fed[i] = length;
            }
            var output = Rec.Decode(MergeDriver.Run(merger, encoded, random, maxChunk: 300, fedAlready: fed));
            Assert.Equal(expected, output);
            Assert.Equal(encoded.Sum(e => (long)e.Length), merger.InputBytes);
            // Every input holds one small buffer again: the adopted ones that grew or were large went back.
            AssertTrimmedBackToOneSmallBufferEach(merger, pool, k);
        }
    }

    [Fact]
    public void AdoptionIsRefusedWithoutAPoolSlackOrAnEmptyUnfinishedInput()
    {
        var first = Rec.Encode([Rec.Of("a", 1), Rec.Of("c", 1)]);
        var second = Rec.Encode([Rec.Of("b", 1), Rec.Of("d", 1)]);
        var unpooled = new StreamMerger(new SumJob(), 2, MergeMode.Merge, initialInputCapacity: 64);
        var buffer = new byte[first.Length + StreamMerger.LendSlackBytes];
        first.CopyTo(buffer, 0);
        Assert.False(unpooled.TryAdopt(0, buffer, first.Length)); // whose pool would the buffer go back to?

        var pool = new ShuffleBufferPool();
        var merger = new StreamMerger(new SumJob(), 3, MergeMode.Merge, initialInputCapacity: 64, bufferPool: pool);
        long rented = pool.RentedBytes;
        var stash = pool.Rent(first.Length + InboundStream.StashSlackBytes);
        first.CopyTo(stash, 0);
        Assert.False(merger.TryAdopt(0, stash, 0)); // nothing to adopt
        Assert.False(merger.TryAdopt(0, stash, stash.Length - StreamMerger.LendSlackBytes + 1)); // no slack left
        merger.Append(1, second.AsSpan(0, 3));
        Assert.False(merger.TryAdopt(1, stash, first.Length)); // input 1 holds bytes already
        merger.Finish(2);
        Assert.False(merger.TryAdopt(2, stash, first.Length)); // finished
        Assert.Equal(rented + stash.Length, pool.RentedBytes); // every refusal took nothing and gave nothing back
        Assert.True(merger.TryAdopt(0, stash, first.Length));
        merger.Finish(0);
        merger.Append(1, second.AsSpan(3));
        merger.Finish(1);
        var output = new byte[256];
        Assert.Equal(DrainStatus.Completed, merger.Drain(output, out int written));
        Assert.Equal(["a", "b", "c", "d"], Keys(output.AsSpan(0, written)));
    }

    [Fact]
    public void LargeRecordsAndBigChunksGrowBuffersAndStillMerge()
    {
        var random = new Random(77);
        var inputs = Enumerable.Range(0, 3).Select(i =>
        {
            var list = Enumerable.Range(0, 30).Select(j =>
            {
                var key = new byte[random.Next(1, 3000)];
                random.NextBytes(key);
                var value = new byte[8];
                return new Rec(key, value);
            }).ToList();
            list.Sort(Rec.CompareKeyValue);
            return list;
        }).ToList();
        var merger = new StreamMerger(new SumJob(), 3, MergeMode.Combine, initialInputCapacity: 64);
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random, maxChunk: 5000, maxOutput: 7000));
        Assert.Equal(NaiveCombine(inputs), output);
    }

    [Fact]
    public void JobDefinedOrderIsHonoured()
    {
        var random = new Random(9);
        var job = new DescendingSumJob();
        var inputs = RandomInputs(random, 5, 50);
        var descending = Comparer<byte[]>.Create((a, b) => b.AsSpan().SequenceCompareTo(a));
        foreach (var list in inputs)
        {
            list.Sort((a, b) => descending.Compare(a.Key, b.Key));
        }
        var merger = new StreamMerger(job, 5, MergeMode.Combine, initialInputCapacity: 16);
        var output = Rec.Decode(MergeDriver.Run(merger, inputs.Select(Rec.Encode).ToList(), random));
        var expected = NaiveCombine(inputs).OrderBy(r => r.Key, descending).ToList();
        Assert.Equal(expected, output);
    }

    [Fact]
    public void MergeEmitsOnlyWhatIsSafeBeforeInputsFinish()
    {
        var merger = new StreamMerger(new SumJob(), 2, MergeMode.Merge);
        merger.Append(0, Rec.Encode([Rec.Of("a", 1), Rec.Of("c", 1)]));
        merger.Append(1, Rec.Encode([Rec.Of("b", 1), Rec.Of("d", 1)]));
        var output = new byte[1024];
        Assert.Equal(DrainStatus.NeedsInput, merger.Drain(output, out int written));
        // "d" must wait: input 0 might still deliver something smaller.
        Assert.Equal(["a", "b", "c"], Keys(output.AsSpan(0, written)));
        Assert.True(merger.NeedsData(0));
        Assert.False(merger.NeedsData(1));
        Assert.Equal("c"u8.ToArray(), merger.LastEmittedKey.ToArray());
        merger.Finish(0);
        Assert.Equal(DrainStatus.NeedsInput, merger.Drain(output, out written));
        Assert.Equal(["d"], Keys(output.AsSpan(0, written)));
        merger.Finish(1);
        Assert.Equal(DrainStatus.Completed, merger.Drain(output, out written));
        Assert.Equal(0, written);
    }

    [Fact]
    public void BytesWrittenInPlaceMergeLikeAppendedOnes()
    {
        var merger = new StreamMerger(new SumJob(), 2, MergeMode.Merge, initialInputCapacity: 64);
        var first = Rec.Encode([Rec.Of("a", 1), Rec.Of("c", 1), Rec.Of("e", 1)]);
        // In place, in two pieces with the second space asked larger than what is written (a short read).
        first.AsSpan(0, 5).CopyTo(merger.AppendSpace(0, 5));
        merger.CommitAppend(0, 5);
        var space = merger.AppendSpace(0, 4096); // grows the 64-byte buffer
        first.AsSpan(5).CopyTo(space);
        merger.CommitAppend(0, first.Length - 5);
        merger.Append(1, Rec.Encode([Rec.Of("b", 1), Rec.Of("d", 1)]));
        merger.Finish(0);
        merger.Finish(1);
        var output = new byte[1024];
        Assert.Equal(DrainStatus.Completed, merger.Drain(output, out int written));
        Assert.Equal(["a", "b", "c", "d", "e"], Keys(output.AsSpan(0, written)));
        Assert.Equal(first.Length + Rec.Encode([Rec.Of("b", 1), Rec.Of("d", 1)]).Length, merger.InputBytes);
    }

    [Fact]
    public void InPlaceAppendsAreChecked()
    {
        var merger = new StreamMerger(new SumJob(), 1, MergeMode.Merge, initialInputCapacity: 64);
        var space = merger.AppendSpace(0, 10);
        Assert.Equal(10, space.Length);
        Assert.Throws<ArgumentOutOfRangeException>(() => merger.CommitAppend(0, 100_000));
        Assert.Throws<ArgumentOutOfRangeException>(() => merger.AppendSpace(0, -1));
        merger.Finish(0);
        Assert.Throws<InvalidOperationException>(() => merger.AppendSpace(0, 1));
    }

    [Fact]
    public void CombineHoldsAKeyWhileAnInputMayStillContinueIt()
    {
        var merger = new StreamMerger(new SumJob(), 2, MergeMode.Combine);
        merger.Append(0, Rec.Encode([Rec.Of("a", 1), Rec.Of("b", 1)]));
        merger.Append(1, Rec.Encode([Rec.Of("b", 2)]));
        var output = new byte[1024];
        Assert.Equal(DrainStatus.NeedsInput, merger.Drain(output, out int written));
        Assert.Equal(["a"], Keys(output.AsSpan(0, written))); // "b" is folded but both inputs ran dry in it
        merger.Finish(0);
        Assert.Equal(DrainStatus.NeedsInput, merger.Drain(output, out written));
        Assert.Equal(0, written);
        Assert.True(merger.NeedsData(1));
        merger.Append(1, Rec.Encode([Rec.Of("b", 4), Rec.Of("c", 1)]));
        Assert.Equal(DrainStatus.NeedsInput, merger.Drain(output, out written));
        var records = Rec.Decode(output.AsSpan(0, written));
        Assert.Equal([Rec.Of("b", 7)], records); // "c" waits: input 1 may have another "c"
        merger.Finish(1);
        Assert.Equal(DrainStatus.Completed, merger.Drain(output, out written));
        Assert.Equal([Rec.Of("c", 1)], Rec.Decode(output.AsSpan(0, written)));
    }

    [Fact]
    public void AStreamEndingMidRecordOrCarryingBadLengthsIsRejected()
    {
        var stream = Rec.Encode([Rec.Of("abc", 1)]);
        var merger = new StreamMerger(new SumJob(), 1, MergeMode.Merge);
        merger.Append(0, stream.AsSpan(0, stream.Length - 1));
        Assert.Throws<InvalidDataException>(() => merger.Finish(0));

        var corrupt = new StreamMerger(new SumJob(), 1, MergeMode.Merge);
        Assert.Throws<InvalidDataException>(() => corrupt.Append(0, new byte[] { 0xFF, 0xFF, 0xFF, 0x01 }));

        var afterHead = new StreamMerger(new SumJob(), 1, MergeMode.Merge);
        afterHead.Append(0, [.. stream, .. stream.AsSpan(0, 3)]);
        afterHead.Finish(0);
        Assert.Throws<InvalidDataException>(() => afterHead.Drain(new byte[100], out _));
    }

    [Fact]
    public void CombineModeRequiresAnAssociativeJob() =>
        Assert.Throws<ArgumentException>(() => new StreamMerger(new ListValuesJob(), 2, MergeMode.Combine));

    [Fact]
    public void ResetInputLetsAReplacementResendAfterTheLastConsumedKey()
    {
        var merger = new StreamMerger(new SumJob(), 2, MergeMode.Combine);
        var output = new byte[1024];
        var received = new List<Rec>();
        merger.Append(0, Rec.Encode([Rec.Of("a", 1), Rec.Of("c", 1), Rec.Of("e", 1)]));
        merger.Append(1, Rec.Encode([Rec.Of("b", 1), Rec.Of("d", 1)])[..^3]); // "d" arrives cut short
        merger.Drain(output, out int written);
        received.AddRange(Rec.Decode(output.AsSpan(0, written)));
        Assert.Equal("b"u8.ToArray(), merger.LastConsumedKey(1).ToArray());
        // Input 1's source fails; a replacement resends everything after "b".
        merger.ResetInput(1);
        Assert.Equal(0, merger.BufferedBytes(1));
        merger.Append(1, Rec.Encode([Rec.Of("d", 1), Rec.Of("f", 1)]));
        merger.Finish(0);
        merger.Finish(1);
        Assert.Equal(DrainStatus.Completed, merger.Drain(output, out written));
        received.AddRange(Rec.Decode(output.AsSpan(0, written)));
        Assert.Equal(["a", "b", "c", "d", "e", "f"], received.Select(r => System.Text.Encoding.ASCII.GetString(r.Key)));
    }

    [Fact]
    public void CombinerOutputOverTheValueLimitIsRejected()
    {
        var job = new TopKJob(TopKJob.MaxK);
        var merger = new StreamMerger(job, 2, MergeMode.Combine);
        // Two lists of 100 entries with ~9 KB items each: the merged list would exceed 1 MiB.
        byte[] List(byte tag) =>
            [.. Enumerable.Range(0, 100).SelectMany(i =>
            {
                var entry = new byte[TopKList.EntryLength(9000)];
                var item = new byte[9000];
                item[0] = tag;
                item[1] = (byte)i;
                TopKList.WriteEntry(entry, 5, item);
                return entry;
            })];
        var a = new RecordBuffer(1 << 20);
        a.Emit([], List(1));
        var b = new RecordBuffer(1 << 20);
        b.Emit([], List(2));
        merger.Append(0, a.WrittenSpan);
        merger.Append(1, b.WrittenSpan);
        merger.Finish(0);
        merger.Finish(1);
        var error = Assert.Throws<RecordTooLargeException>(() => merger.Drain(new byte[4096], out _));
        Assert.Contains("value limit", error.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ResetReusesTheMergerWithoutAllocating()
    {
        var random = new Random(3);
        var inputs = RandomInputs(random, 7, 200).Select(Rec.Encode).ToList();
        var merger = new StreamMerger(new SumJob(), 7, MergeMode.Combine, initialInputCapacity: 4096);
        var output = new byte[256];
        void RunOnce()
        {
            merger.Reset();
            for (int i = 0; i < 7; i++)
            {
                merger.Append(i, inputs[i]);
                merger.Finish(i);
            }
            while (merger.Drain(output, out _) != DrainStatus.Completed)
            {
            }
        }
        RunOnce();
        Assert.Equal(0, ThreadAllocations.LeastOf(5, _ => RunOnce()));
    }

    private static string[] Keys(ReadOnlySpan<byte> stream) =>
        [.. Rec.Decode(stream).Select(r => System.Text.Encoding.ASCII.GetString(r.Key))];
}
