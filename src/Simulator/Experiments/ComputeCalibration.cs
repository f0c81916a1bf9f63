using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Merge;
using Camdoop.MapReduce.Records;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Topology;

namespace Camdoop.Experiments;

/// <summary>
/// Measures the rates of a simulated server's work on this machine by running the real code paths in process over
/// generated data (<c>camdoop calibrate</c>): the map task over a few servers' inputs; a vertex's merge (and combine,
/// for an associative job) of seven sorted streams, one per stripe; and a root reducer's merge, reduce and output of
/// the same streams. Each is timed in the calling thread's CPU time, repeated, and the median taken, so other
/// processes on the machine matter less than they would to wall time.
/// </summary>
public static class ComputeCalibration
{
    // A root reducer merges its six tree children and its local runs: seven streams.
    private const int Streams = 7;

    private const int DrainBytes = 64 * 1024;

    public static ComputeRatesFile Run(Workload workload, long bytesPerServer, int repeats, IProgress<string>? progress = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(bytesPerServer, 1024L);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(repeats);
        var options = new JobSimulationOptions
        {
            Torus = new Torus(3, 3, 3),
            Workload = workload,
            Settings = new SimulationSettings { BytesPerServer = bytesPerServer },
            ReduceTasks = 1,
        };
        options.Validate();
        var job = JobRegistry.Create(JobSimulation.BuiltInJob(workload));
        var inputs = JobSimulationInput.Generate(options).Take(Streams).ToArray();
        var map = new List<double>();
        var merge = new List<double>();
        var reduce = new List<double>();
        for (int i = 0; i < repeats; i++)
        {
            var outputs = new MapOutput[Streams];
            long inputBytes = inputs.Sum(x => (long)x.Length);
            long mapNs = Timed(() =>
            {
                for (int s = 0; s < Streams; s++)
                {
                    outputs[s] = MapTask.Run(job, inputs[s], new MapTaskOptions { ReduceTasks = 1, JobId = 1, MapTaskId = (ulong)s + 1 });
                }
            });
            map.Add(Rate(inputBytes, mapNs));
            var mergeMode = job.IsAssociativeCommutative ? MergeMode.Combine : MergeMode.Merge;
            merge.Add(MergeRate(job, outputs, mergeMode, output: null));
            var reduceMode = job.IsAssociativeCommutative && job.ReduceIsIdentity ? MergeMode.Combine : MergeMode.Reduce;
            using (var output = new ReduceOutput(job, path: null))
            {
                reduce.Add(MergeRate(job, outputs, reduceMode, output));
            }
            foreach (var o in outputs)
            {
                o.Dispose();
            }
            progress?.Report($"repeat {i + 1}/{repeats}: map {map[^1] / 1e9:0.00}, merge {merge[^1] / 1e9:0.00}, reduce {reduce[^1] / 1e9:0.00} Gbit/s");
        }
        return new ComputeRatesFile
        {
            Job = JobSimulation.BuiltInJob(workload),
            MapBitsPerSecond = Median(map),
            MapCores = Environment.ProcessorCount,
            MergeBitsPerSecond = Median(merge),
            ReduceBitsPerSecond = Median(reduce),
            Machine = HostMachine.Current.ToString(),
        };
    }

    /// <summary>Merges each stripe's runs of the seven map outputs, as a vertex or (with an output) a root does.</summary>
    private static double MergeRate(IMapReduceJob job, MapOutput[] outputs, MergeMode mode, ReduceOutput? output)
    {
        var streams = new byte[Stripes.Count][][];
        long bytes = 0;
        for (int t = 0; t < Stripes.Count; t++)
        {
            streams[t] = new byte[Streams][];
            for (int s = 0; s < Streams; s++)
            {
                streams[t][s] = outputs[s].Payload(0, t).ToArray();
                bytes += streams[t][s].Length;
            }
        }
        var drain = new byte[DrainBytes];
        long ns = Timed(() =>
        {
            for (int t = 0; t < Stripes.Count; t++)
            {
                var merger = new StreamMerger(job, Streams, mode);
                for (int s = 0; s < Streams; s++)
                {
                    // As frames arrive: appended piece by piece into the merger's buffers.
                    var stream = streams[t][s].AsSpan();
                    for (int at = 0; at < stream.Length; at += 8192)
                    {
                        merger.Append(s, stream[at..Math.Min(stream.Length, at + 8192)]);
                    }
                    merger.Finish(s);
                }
                DrainStatus status;
                do
                {
                    status = merger.Drain(drain, out int written);
                    output?.Write(drain.AsSpan(0, written));
                }
                while (status != DrainStatus.Completed);
            }
            output?.Complete();
        });
        return Rate(bytes, ns);
    }

    private static long Timed(Action work)
    {
        GC.Collect();
        long start = ThreadCpuClock.IsAvailable ? ThreadCpuClock.Nanoseconds() : System.Diagnostics.Stopwatch.GetTimestamp();
        work();
        return ThreadCpuClock.IsAvailable
            ? ThreadCpuClock.Nanoseconds() - start
            : (long)System.Diagnostics.Stopwatch.GetElapsedTime(start).TotalNanoseconds;
    }

    private static double Rate(long bytes, long ns) => bytes * 8e9 / Math.Max(1, ns);

    private static double Median(List<double> values)
    {
        values.Sort();
        return values[values.Count / 2];
    }
}
