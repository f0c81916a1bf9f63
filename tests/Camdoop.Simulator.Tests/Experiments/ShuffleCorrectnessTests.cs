using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// The acceptance matrix: every built-in job, both modes, R in {1, 7, N}, on 3x3x3 and 4x4x4; each reduce
/// output must equal the single-process reference MapReduce over the same input (records, values and formatted
/// files). Inputs are small so that the matrix runs in seconds.
/// </summary>
public sealed class ShuffleCorrectnessTests
{
    public static TheoryData<string, Workload, string?, int, ShuffleMode> Matrix()
    {
        var data = new TheoryData<string, Workload, string?, int, ShuffleMode>();
        foreach (string torus in new[] { "3x3x3", "4x4x4" })
        {
            int n = Torus.Parse(torus).Count;
            foreach (var (workload, job) in new (Workload, string?)[]
            {
                (Workload.WordCount, null), (Workload.Sort, null), (Workload.Synthetic, null), (Workload.TopK, "topk?k=15"),
            })
            {
                foreach (int r in new[] { 1, 7, n })
                {
                    foreach (var mode in new[] { ShuffleMode.Camdoop, ShuffleMode.NoAgg })
                    {
                        data.Add(torus, workload, job, r, mode);
                    }
                }
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Matrix))]
    public void OutputEqualsTheReference(string torus, Workload workload, string? job, int reduceTasks, ShuffleMode mode)
    {
        var result = JobSimulation.Run(new JobSimulationOptions
        {
            Torus = Torus.Parse(torus),
            Workload = workload,
            Job = job,
            OutputRatio = 0.4,
            Settings = new SimulationSettings
            {
                BytesPerServer = workload == Workload.Sort ? 3_000 : 4_000,
                Seed = (ulong)(reduceTasks * 7) + 3,
                Verify = true,
            },
            ReduceTasks = reduceTasks,
            Mode = mode,
            WriteOutputFiles = true,
            MapParallelism = 1,
        });
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.Verified, result.VerificationError);
        Assert.Equal(reduceTasks, result.Reducers.Count);
        Assert.True(result.OutputRecords > 0);
        Assert.Equal(0, result.RetransmittedBytes); // no loss, no spurious retransmission
    }

    /// <summary>
    /// An associative user job whose reduce finalizes the folded value (binary count to decimal text): the reducer
    /// calls it for every key. The same job wrongly declaring its reduce the identity gets the folded binary counts
    /// instead, which the reference check catches: the declaration is what decides.
    /// </summary>
    [Theory]
    [InlineData(typeof(Jobs.FinalizingCountJob), true)]
    [InlineData(typeof(Jobs.MisdeclaredFinalizingCountJob), false)]
    public void AReduceThatIsNotTheIdentityRunsAtTheRoot(Type jobType, bool matchesReference)
    {
        var result = JobSimulation.Run(new JobSimulationOptions
        {
            Torus = new Torus(3, 3, 3),
            Workload = Workload.WordCount,
            Job = $"{jobType.Assembly.Location}#{jobType.FullName}",
            Settings = new SimulationSettings { BytesPerServer = 4_000, Verify = true },
            ReduceTasks = 4,
            Mode = ShuffleMode.Camdoop,
            MapParallelism = 1,
        });
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.OutputRecords > 100);
        Assert.True(matchesReference == result.Verified, result.VerificationError);
    }
}
