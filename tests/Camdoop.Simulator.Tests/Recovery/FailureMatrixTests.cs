using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Recovery;

/// <summary>
/// Every job finishes with exactly the right output through a server crash (the Camdoop paper, §4.2): the root of
/// reduce task 0, a neighbour of it, or a server that is neither, at a quarter, half and three quarters of the
/// failure-free shuffle-and-reduce time, for WordCount and the synthetic job at S = 1 and S = 0.5, with and without
/// on-path aggregation, with one reduce task and with one per server. Each job fails each kind of server once, at
/// times that rotate from job to job, so that every kind is failed at every time across the matrix.
/// </summary>
public sealed class FailureMatrixTests
{
    private static readonly string[] Times = ["0.25T", "0.5T", "0.75T"];

    public static TheoryData<string, Workload, double, ShuffleMode, bool, int> Jobs()
    {
        var data = new TheoryData<string, Workload, double, ShuffleMode, bool, int>();
        int rotation = 0;
        foreach (string torus in new[] { "3x3x3", "4x4x4" })
        {
            foreach (var (workload, s) in new[] { (Workload.WordCount, 0.0), (Workload.Synthetic, 1.0), (Workload.Synthetic, 0.5) })
            {
                foreach (var mode in new[] { ShuffleMode.Camdoop, ShuffleMode.NoAgg })
                {
                    foreach (bool perServer in new[] { false, true })
                    {
                        data.Add(torus, workload, s, mode, perServer, rotation++ % Times.Length);
                    }
                }
            }
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Jobs))]
    public void EveryFailureGivesTheReferenceOutput(string torus, Workload workload, double s, ShuffleMode mode, bool reducerPerServer, int rotation)
    {
        var cube = Torus.Parse(torus);
        using var run = new RecoveryRun(new JobSimulationOptions
        {
            Torus = cube,
            Workload = workload,
            OutputRatio = s,
            Mode = mode,
            ReduceTasks = reducerPerServer ? cube.Count : 1,
            Settings = new SimulationSettings { BytesPerServer = cube.Count > 27 ? 60_000 : 120_000 },
        });
        string[] targets = ["root", "root-neighbour", "random"];
        for (int k = 0; k < targets.Length; k++)
        {
            string when = Times[(rotation + k) % Times.Length];
            var result = run.Run($"{targets[k]}@{when}");
            var failure = Assert.Single(result.Failures);
            double fraction = double.Parse(when[..^1], System.Globalization.CultureInfo.InvariantCulture);
            Assert.Equal(fraction * run.Baseline.ShuffleReduceSeconds, failure.AtSeconds, 6);
        }
    }
}
