using Camdoop.Experiments;
using Camdoop.MapReduce.Service;

namespace Camdoop.Simulator.Tests.Recovery;

/// <summary>
/// One job's input mapped once, its failure-free run (T, with a real node's beacons), and runs of the same job with
/// failures, each checked against the single-process reference.
/// </summary>
internal sealed class RecoveryRun : IDisposable
{
    private readonly JobSimulationInput _input;

    public RecoveryRun(JobSimulationOptions options)
    {
        Options = options with { Settings = options.Settings with { Verify = true }, MapParallelism = 1 };
        _input = JobSimulationInput.Prepare(Options, keepInputs: true);
        Baseline = JobSimulation.Run(Options with { NodeBeacons = true }, _input);
        Assert.True(Baseline.Completed, string.Join("; ", Baseline.Errors));
        Assert.True(Baseline.Verified, Baseline.VerificationError);
    }

    public JobSimulationOptions Options { get; }

    public JobSimulationResult Baseline { get; }

    /// <summary>The map outputs every run shares.</summary>
    public JobSimulationInput Input => _input;

    public JobPlacement Placement => new(Options.Torus, Options.JobId, Options.ReduceTasks, Options.Settings.Trees);

    /// <summary>T in nanoseconds.</summary>
    public long T => (long)Math.Round(Baseline.ShuffleReduceSeconds * 1e9);

    public InjectedFailure Resolve(string failure) => FailureRequest.Parse(failure).Resolve(Options.Torus, Placement, (int)Options.Settings.Seed, T);

    /// <summary>Runs the job with <paramref name="failures"/> (WHAT@WHEN each) and asserts its output is the reference's.</summary>
    public JobSimulationResult Run(params string[] failures) => Run(failures.Select(Resolve).ToArray());

    public JobSimulationResult Run(InjectedFailure[] failures, JobSimulationOptions? changed = null)
    {
        var result = JobSimulation.Run((changed ?? Options) with { Failures = failures }, _input);
        string what = string.Join(", ", failures.Select(f => $"{f.What} {f.Target} at {f.AtNanoseconds / 1e6:0.###} ms"));
        Assert.True(result.Completed, $"{what}: the job did not complete: {string.Join("; ", result.Errors)}");
        Assert.True(result.Verified, $"{what}: {result.VerificationError}");
        return result;
    }

    public void Dispose() => _input.Dispose();
}
