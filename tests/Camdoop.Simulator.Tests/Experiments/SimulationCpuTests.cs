using System.Diagnostics;
using Camdoop.Experiments;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Topology;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// A run's simulationCpuSeconds is its own threads' CPU: a sweep runs simulations side by side and maps the next
/// input beside them, and the process's CPU counted all of that in every run.
/// </summary>
public sealed class SimulationCpuTests
{
    private static JobSimulationOptions Options(int threads) => new()
    {
        Torus = Torus.Parse("4x4x4"),
        Workload = Workload.Synthetic,
        OutputRatio = 0.5,
        Settings = new SimulationSettings { BytesPerServer = 100_000 },
        ReduceTasks = 1,
        Mode = ShuffleMode.NoAgg,
        MapParallelism = 1,
        SimulationThreads = threads,
    };

    [Fact]
    public void AThreadSpinningBesideTheRunIsNotCounted()
    {
        var options = Options(threads: 1);
        using var input = JobSimulationInput.Prepare(options);
        using var stop = new CancellationTokenSource();
        long spinnerNs = 0;
        var spinner = new Thread(() =>
        {
            long start = ThreadCpuClock.Nanoseconds();
            while (!stop.IsCancellationRequested)
            {
            }
            spinnerNs = ThreadCpuClock.Nanoseconds() - start;
        })
        { IsBackground = true };
        var process = Process.GetCurrentProcess().TotalProcessorTime;
        spinner.Start();
        var result = JobSimulation.Run(options, input);
        stop.Cancel();
        spinner.Join();
        double processCpu = (Process.GetCurrentProcess().TotalProcessorTime - process).TotalSeconds;
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(result.SimulationCpuSeconds > 0);
        // One simulation thread uses at most its wall time (plus starting the run and the clocks' granularity).
        Assert.InRange(result.SimulationCpuSeconds, 0, (result.SimulationWallSeconds * 1.1) + 0.1);
        // The process's CPU holds the spinner's as well (what this column counted before), whatever share of a core a
        // loaded machine gave it.
        double spun = spinnerNs / 1e9;
        Assert.True(spun > 0.05, $"the spinner ran {spun:0.###} s");
        Assert.True(processCpu >= result.SimulationCpuSeconds + (0.9 * spun),
            $"process {processCpu:0.###} s, simulation {result.SimulationCpuSeconds:0.###} s, spinner {spun:0.###} s over {result.SimulationWallSeconds:0.###} s");
    }

    [Fact]
    public void WorkerThreadsAreCounted()
    {
        double workers = -1;
        var options = Options(threads: 2) with { Inspect = (sim, _, _) => workers = sim.WorkerCpuSeconds };
        var result = JobSimulation.Run(options);
        Assert.True(result.Completed, string.Join("; ", result.Errors));
        Assert.True(workers > 0, "the second thread's CPU is measured");
        Assert.True(result.SimulationCpuSeconds > workers);
        Assert.InRange(result.SimulationCpuSeconds, 0, (2 * result.SimulationWallSeconds * 1.1) + 0.1);
    }
}
