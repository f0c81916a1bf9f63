using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Experiments;
using Camdoop.MapReduce.Service;

namespace Camdoop.Cli.Commands;

/// <summary>
/// Refuses a simulation that cannot fit in this machine's memory before it starts: at R = N the vertices, streams and
/// shuffle buffers grow with servers x reduce tasks, and such a run was killed by the kernel minutes in instead of
/// failing with a clear line (<see cref="JobMemoryEstimate"/> has the model and what it was measured on).
/// </summary>
internal static class MemoryCheck
{
    /// <summary>
    /// Throws a one-line <see cref="CliException"/> when a job of <paramref name="reduceTasks"/> on
    /// <paramref name="servers"/> servers, plus <paramref name="extraBytes"/>, would need more than <paramref name="availableBytes"/>.
    /// </summary>
    public static void Require(string command, string torus, int servers, int reduceTasks, long inputBytesPerServer, bool mapOutputOnDisk,
        CamdoopServiceOptions? service, long extraBytes, long availableBytes, string lower)
    {
        long budget = (service ?? new CamdoopServiceOptions()).MemoryBudgetBytes;
        long needed = JobMemoryEstimate.Bytes(servers, reduceTasks, inputBytesPerServer, mapOutputOnDisk, budget) + extraBytes;
        if (needed > availableBytes)
        {
            throw new CliException(string.Create(CultureInfo.InvariantCulture,
                $"{command}: {torus} at R={reduceTasks} needs about {Units.Bytes(needed)} of memory (vertices, streams and shuffle buffers grow with servers x reduce tasks) and this machine has {Units.Bytes(availableBytes)}; {lower}, or pass --force"));
        }
    }

    /// <summary>The memory this process may use: physical memory, or the container's limit.</summary>
    public static long Available => GC.GetGCMemoryInfo().TotalAvailableMemoryBytes;
}
