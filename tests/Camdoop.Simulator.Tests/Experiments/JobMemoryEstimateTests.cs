using Camdoop.Experiments;

namespace Camdoop.Simulator.Tests.Experiments;

public class JobMemoryEstimateTests
{
    private const long Budget = 8L * 1024 * 1024;
    private const long Input = 2L * 1024 * 1024;

    [Fact]
    public void MoreServersReduceTasksOrInputNeedMoreMemory()
    {
        long baseline = JobMemoryEstimate.Bytes(512, 64, Input, mapOutputOnDisk: false, Budget);
        Assert.True(JobMemoryEstimate.Bytes(1000, 64, Input, false, Budget) > baseline);
        Assert.True(JobMemoryEstimate.Bytes(512, 512, Input, false, Budget) > baseline);
        Assert.True(JobMemoryEstimate.Bytes(512, 64, 2 * Input, false, Budget) > baseline);
        // On disk the map outputs live mostly in the page cache.
        Assert.True(JobMemoryEstimate.Bytes(512, 64, Input, mapOutputOnDisk: true, Budget) < baseline);
    }

    [Fact]
    public void RIsWhatMakesLargeCubesHeavy()
    {
        // At R = N the per-vertex and per-stream terms grow with N x R: 16x16x16 at R = N needs far more than at R = 1.
        long one = JobMemoryEstimate.Bytes(4096, 1, Input, true, Budget);
        long all = JobMemoryEstimate.Bytes(4096, 4096, Input, true, Budget);
        Assert.True(all > 20 * one, $"{all} vs {one}");
    }

    [Theory]
    // Peak resident memory of `camdoop sim run` at S=1 on 2026-11-26 (GB, 1e9 bytes), 2 MB per server.
    [InlineData(512, 8, false, 6.8)]
    [InlineData(512, 64, false, 8.1)]
    [InlineData(512, 512, false, 14.2)]
    [InlineData(216, 216, false, 4.6)]
    [InlineData(729, 729, false, 23.1)]
    public void TheEstimateIsNearTheMeasuredPeaks(int servers, int reduceTasks, bool onDisk, double measuredGb)
    {
        double estimated = JobMemoryEstimate.Bytes(servers, reduceTasks, Input, onDisk, Budget) / 1e9;
        Assert.InRange(estimated, measuredGb * 0.85, measuredGb * 1.15);
    }

    [Fact]
    public void BadArgumentsAreRejected()
    {
        Assert.Throws<ArgumentOutOfRangeException>(() => JobMemoryEstimate.Bytes(0, 1, Input, false, Budget));
        Assert.Throws<ArgumentOutOfRangeException>(() => JobMemoryEstimate.Bytes(8, 0, Input, false, Budget));
        Assert.Throws<ArgumentOutOfRangeException>(() => JobMemoryEstimate.Bytes(8, 1, -1, false, Budget));
    }
}
