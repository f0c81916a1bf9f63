using Camdoop.Experiments;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>What every stream-shuffle run (TCP Camdoop, its aggregation trees, NetAgg, GRIN) must show to be exact.</summary>
internal static class StreamShuffleResults
{
    /// <summary>The run completed, its output equals the single-process reference, and every reduce task wrote some.</summary>
    public static void AssertExact(JobSimulationResult result, int reduceTasks)
    {
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.Verified, result.VerificationError);
        Assert.Equal(reduceTasks, result.Reducers.Count);
        Assert.True(result.OutputRecords > 0);
    }
}
