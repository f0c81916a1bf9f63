using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Xunit.Abstractions;

namespace Camdoop.Simulator.Tests.Recovery;

public sealed class RecoveryProbe(ITestOutputHelper output)
{
    [Theory]
    [InlineData("root", 0.5, 1, ShuffleMode.Camdoop, 1.0)]
    public void Probe(string what, double at, int r, ShuffleMode mode, double s)
    {
        var options = new JobSimulationOptions
        {
            Torus = new Torus(3, 3, 3),
            Workload = Workload.Synthetic,
            OutputRatio = s,
            ReduceTasks = r,
            Mode = mode,
            BytesPerServer = 100_000,
            MapParallelism = 1,
            Verify = true,
            NodeBeacons = true,
        };
        var baseline = JobSimulation.Run(options);
        var placement = new JobPlacement(options.Torus, options.JobId, r);
        var failure = FailureRequest.Parse($"{what}@{at}T").Resolve(options.Torus, placement, 1, (long)(baseline.ShuffleReduceSeconds * 1e9));
        var log = new List<string>();
        var result = JobSimulation.Run(options with { Failures = [failure], LogSink = e => { lock (log) { log.Add(e.ToString()); } } });
        foreach (var line in log.Order())
        {
            output.WriteLine(line);
        }
        output.WriteLine($"failed {failure.Target} at {failure.AtNanoseconds / 1e9}: completed {result.Completed} verified {result.Verified}");
        output.WriteLine($"time {result.ShuffleReduceSeconds} detected {result.Failures[0].DetectedAtSeconds} {result.Recovery}");
    }
}
