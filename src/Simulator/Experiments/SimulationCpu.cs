using System.Diagnostics;
using Camdoop.Runtime.Hosting;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>
/// The CPU a simulation's own threads spend from <see cref="Start"/> on: the driving thread (the caller) plus the
/// partition workers, so runs side by side in one process do not count each other. Falls back to the process's CPU
/// where thread CPU time is not available.
/// </summary>
internal readonly struct SimulationCpu
{
    private readonly long _driverNanoseconds;
    private readonly double _workerSeconds;
    private readonly TimeSpan _process;

    private SimulationCpu(long driverNanoseconds, double workerSeconds, TimeSpan process)
    {
        _driverNanoseconds = driverNanoseconds;
        _workerSeconds = workerSeconds;
        _process = process;
    }

    /// <summary>Starts counting on the calling thread, which must be the one that then drives <paramref name="simulation"/>.</summary>
    public static SimulationCpu Start(Simulation simulation) => ThreadCpuClock.IsAvailable
        ? new SimulationCpu(ThreadCpuClock.Nanoseconds(), simulation.WorkerCpuSeconds, default)
        : new SimulationCpu(0, 0, Process.GetCurrentProcess().TotalProcessorTime);

    /// <summary>CPU seconds since <see cref="Start"/>; call on the same thread.</summary>
    public double Seconds(Simulation simulation) => ThreadCpuClock.IsAvailable
        ? ((ThreadCpuClock.Nanoseconds() - _driverNanoseconds) / 1e9) + (simulation.WorkerCpuSeconds - _workerSeconds)
        : (Process.GetCurrentProcess().TotalProcessorTime - _process).TotalSeconds;
}
