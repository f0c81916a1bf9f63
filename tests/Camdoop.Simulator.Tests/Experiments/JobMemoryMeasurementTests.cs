using Camdoop.Experiments;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Xunit.Abstractions;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>
/// <see cref="JobMemoryEstimate"/> against what a small simulated job really holds: the managed heap's growth over
/// the run, sampled while it runs and measured after a full collection before the simulation is torn down. The
/// estimate is of a whole process's peak resident memory, so it must be at least that growth, and it should not be
/// so loose as to refuse runs that would fit. Alone in its collection: the heap is the whole process's.
/// </summary>
[Collection(HeapMeasurementCollection.Name)]
public sealed class JobMemoryMeasurementTests(ITestOutputHelper output)
{
    [Theory]
    [InlineData("4x4x4", 1, 500_000, false)]
    [InlineData("4x4x4", 64, 500_000, false)]
    [InlineData("4x4x4", 8, 500_000, true)]
    [InlineData("3x3x3", 27, 500_000, false)]
    public void TheEstimateBoundsWhatASmallRunHolds(string size, int reduceTasks, long bytesPerServer, bool mapOutputOnDisk)
    {
        var torus = Torus.Parse(size);
        var options = new JobSimulationOptions
        {
            Torus = torus,
            Settings = new SimulationSettings { BytesPerServer = bytesPerServer },
            ReduceTasks = reduceTasks,
            MapOutputOnDisk = mapOutputOnDisk,
            MapParallelism = 1,
        };
        long estimate = JobMemoryEstimate.Bytes(torus.Count, reduceTasks, bytesPerServer, mapOutputOnDisk, new CamdoopServiceOptions().MemoryBudgetBytes);

        GC.Collect();
        GC.WaitForPendingFinalizers();
        long before = GC.GetTotalMemory(forceFullCollection: true);
        long peak = before;
        long atEnd = 0;
        using var done = new ManualResetEventSlim();
        var sampler = new Thread(() =>
        {
            do
            {
                Volatile.Write(ref peak, Math.Max(Volatile.Read(ref peak), GC.GetTotalMemory(forceFullCollection: false)));
            }
            while (!done.Wait(1));
        });
        sampler.Start();
        JobSimulationResult result;
        try
        {
            result = JobSimulation.Run(options with { Inspect = (_, _, _) => atEnd = GC.GetTotalMemory(forceFullCollection: true) });
        }
        finally
        {
            done.Set();
            sampler.Join();
        }

        Assert.True(result.Completed, string.Join("; ", result.Failures));
        long held = Math.Max(peak, atEnd) - before;
        Assert.True(atEnd - before > 0, $"the run held nothing at its end ({atEnd - before} bytes)");
        string what = $"{size} R={reduceTasks}, {bytesPerServer} B per server{(mapOutputOnDisk ? " on disk" : "")}: estimated {estimate} bytes, the heap grew by {held}";
        output.WriteLine(what);
        Assert.True(estimate >= held, what);
        Assert.True(estimate <= 10 * held, what);
    }
}

/// <summary>Tests that measure the process's heap run alone.</summary>
[CollectionDefinition(Name, DisableParallelization = true)]
public sealed class HeapMeasurementCollection
{
    public const string Name = "Heap measurement";
}
