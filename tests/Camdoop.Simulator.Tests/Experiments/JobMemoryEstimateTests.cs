using Camdoop.Experiments;

namespace Camdoop.Simulator.Tests.Experiments;

public class JobMemoryEstimateTests
{
    private const long Budget = 8L * 1024 * 1024;
    private const long Input = 2L * 1024 * 1024;

    private static readonly int[] ServerCounts = [8, 27, 64, 512, 1000, 4096];
    private static readonly int[] ReduceTaskCounts = [1, 2, 8, 64, 512, 4096];
    private static readonly long[] Inputs = [0, 20_000, Input, 64L * 1024 * 1024];
    private static readonly long[] Budgets = [0, 1024 * 1024, Budget, 64L * 1024 * 1024];

    [Fact]
    public void MoreServersReduceTasksInputOrBufferBudgetNeedMoreMemory()
    {
        foreach (bool onDisk in new[] { false, true })
        {
            foreach (long input in Inputs)
            {
                foreach (long budget in Budgets)
                {
                    foreach (int r in ReduceTaskCounts)
                    {
                        AssertIncreasing(ServerCounts, servers => JobMemoryEstimate.Bytes(servers, r, input, onDisk, budget), $"servers (R={r})");
                    }
                    foreach (int servers in ServerCounts)
                    {
                        AssertIncreasing(ReduceTaskCounts, r => JobMemoryEstimate.Bytes(servers, r, input, onDisk, budget), $"R ({servers} servers)");
                    }
                }
            }
            foreach (int servers in ServerCounts)
            {
                foreach (int r in ReduceTaskCounts)
                {
                    foreach (long budget in Budgets)
                    {
                        AssertIncreasing(Inputs, input => JobMemoryEstimate.Bytes(servers, r, input, onDisk, budget), "input per server");
                    }
                    foreach (long input in Inputs)
                    {
                        AssertIncreasing(Budgets, budget => JobMemoryEstimate.Bytes(servers, r, input, onDisk, budget), "buffer budget");
                    }
                }
            }
        }
    }

    [Fact]
    public void MapOutputsOnDiskNeedLessMemoryThanInMemory()
    {
        foreach (int servers in ServerCounts)
        {
            foreach (int r in ReduceTaskCounts)
            {
                foreach (long budget in Budgets)
                {
                    Assert.Equal(JobMemoryEstimate.Bytes(servers, r, 0, true, budget), JobMemoryEstimate.Bytes(servers, r, 0, false, budget));
                    foreach (long input in Inputs.Where(i => i > 0))
                    {
                        long onDisk = JobMemoryEstimate.Bytes(servers, r, input, mapOutputOnDisk: true, budget);
                        long inMemory = JobMemoryEstimate.Bytes(servers, r, input, mapOutputOnDisk: false, budget);
                        Assert.True(onDisk < inMemory, $"{servers} servers, R={r}, {input} B input, {budget} B budget: {onDisk} on disk vs {inMemory}");
                    }
                }
            }
        }
    }

    [Fact]
    public void AJobIsExactlyItsInputPartPlusItsShufflePart()
    {
        foreach (bool onDisk in new[] { false, true })
        {
            foreach (int servers in ServerCounts)
            {
                foreach (int r in ReduceTaskCounts)
                {
                    foreach (long input in Inputs)
                    {
                        foreach (long budget in Budgets)
                        {
                            long parts = JobMemoryEstimate.InputBytes(servers, input, onDisk) + JobMemoryEstimate.ShuffleBytes(servers, r, budget);
                            Assert.Equal(parts, JobMemoryEstimate.Bytes(servers, r, input, onDisk, budget));
                        }
                    }
                }
            }
        }
    }

    [Fact]
    public void RIsWhatMakesLargeCubesHeavy()
    {
        // At R = N the per-vertex and per-stream terms grow with N x R: 16x16x16 at R = N needs far more than at R = 1.
        long one = JobMemoryEstimate.Bytes(4096, 1, Input, true, Budget);
        long all = JobMemoryEstimate.Bytes(4096, 4096, Input, true, Budget);
        Assert.True(all > 20 * one, $"{all} vs {one}");
    }

    [Fact]
    public void AnEstimateTooLargeToCountSaturatesInsteadOfWrappingAround()
    {
        // A wrapped-around (negative) estimate would pass every "does it fit" check.
        Assert.Equal(long.MaxValue, JobMemoryEstimate.Bytes(int.MaxValue, int.MaxValue, long.MaxValue / 2, false, long.MaxValue / 2));
        Assert.Equal(long.MaxValue, JobMemoryEstimate.InputBytes(int.MaxValue, long.MaxValue / 2, false));
        Assert.Equal(long.MaxValue, JobMemoryEstimate.ShuffleBytes(int.MaxValue, int.MaxValue, long.MaxValue / 2));
    }

    [Fact]
    public void BadArgumentsAreRejected()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => JobMemoryEstimate.Bytes(0, 1, Input, false, Budget));
        Assert.Throws<ArgumentOutOfRangeException>(() => JobMemoryEstimate.Bytes(8, 0, Input, false, Budget));
        Assert.Throws<ArgumentOutOfRangeException>(() => JobMemoryEstimate.Bytes(8, 1, -1, false, Budget));
        Assert.Throws<ArgumentOutOfRangeException>(() => JobMemoryEstimate.Bytes(8, 1, Input, false, -1));
    }

    private static void AssertIncreasing<T>(IReadOnlyList<T> values, Func<T, long> estimate, string what)
    {
        for (int i = 1; i < values.Count; i++)
        {
            long before = estimate(values[i - 1]);
            long after = estimate(values[i]);
            Assert.True(after > before, $"more {what}, {values[i - 1]} -> {values[i]}: {before} -> {after} bytes");
        }
    }
}
