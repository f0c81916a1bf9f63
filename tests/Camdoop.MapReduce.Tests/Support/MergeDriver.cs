using Camdoop.MapReduce.Merge;

namespace Camdoop.MapReduce.Tests.Support;

/// <summary>
/// Feeds a merger its inputs' streams in random chunks, in random input order, finishes inputs at random moments,
/// and drains into random small output capacities until the merger completes. Checks the flow-control reports on
/// the way. Returns the whole output stream. <c>betweenDrains</c>, when given, runs before every drain (a
/// test's hook to act on the merger mid-stream); <c>fedAlready</c>, when given, is how many bytes of each
/// input the test handed the merger itself before the run.
/// </summary>
public static class MergeDriver
{
    public static byte[] Run(StreamMerger merger, IReadOnlyList<byte[]> inputs, Random random, int maxChunk = 64, int maxOutput = 48,
        Action<StreamMerger>? betweenDrains = null, IReadOnlyList<int>? fedAlready = null)
    {
        var offsets = fedAlready?.ToArray() ?? new int[inputs.Count];
        var output = new List<byte>();
        var buffer = new byte[Math.Max(maxOutput, 1)];
        int idle = 0;
        while (true)
        {
            betweenDrains?.Invoke(merger);
            int capacity = random.Next(3) == 0 ? random.Next(1, 4) : random.Next(1, maxOutput + 1);
            var status = merger.Drain(buffer.AsSpan(0, capacity), out int written);
            Assert.InRange(written, 0, capacity);
            output.AddRange(buffer.AsSpan(0, written));
            if (status == DrainStatus.Completed)
            {
                Assert.True(merger.IsCompleted);
                Assert.All(Enumerable.Range(0, inputs.Count), i => Assert.True(merger.IsFinished(i)));
                return [.. output];
            }
            if (status == DrainStatus.OutputFull)
            {
                Assert.Equal(capacity, written);
            }
            if (status == DrainStatus.NeedsInput)
            {
                // Some unfinished input must be starving, and only unfinished inputs can be.
                Assert.True(merger.WaitingInputs > 0);
                Assert.Contains(Enumerable.Range(0, inputs.Count), i => merger.NeedsData(i));
                Assert.All(Enumerable.Range(0, inputs.Count).Where(merger.NeedsData), i => Assert.False(merger.IsFinished(i)));
                Assert.Equal(0, merger.PendingOutputBytes);
            }
            // Feed one or more inputs: a starving one when the merger is blocked, sometimes any other.
            int feeds = status == DrainStatus.NeedsInput ? 1 + random.Next(2) : random.Next(2);
            for (int f = 0; f < feeds; f++)
            {
                var candidates = Enumerable.Range(0, inputs.Count).Where(i => !merger.IsFinished(i)).ToList();
                if (candidates.Count == 0)
                {
                    break;
                }
                var starving = candidates.Where(merger.NeedsData).ToList();
                int input = status == DrainStatus.NeedsInput && f == 0 && starving.Count > 0
                    ? starving[random.Next(starving.Count)]
                    : candidates[random.Next(candidates.Count)];
                int remaining = inputs[input].Length - offsets[input];
                if (remaining == 0)
                {
                    merger.Finish(input);
                    continue;
                }
                int before = merger.BufferedBytes(input);
                int chunk = Math.Min(remaining, random.Next(1, maxChunk + 1));
                merger.Append(input, inputs[input].AsSpan(offsets[input], chunk));
                offsets[input] += chunk;
                Assert.Equal(before + chunk, merger.BufferedBytes(input));
            }
            Assert.True(++idle < 10_000_000, "merge made no progress");
        }
    }
}
