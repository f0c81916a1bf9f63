using System.Diagnostics;
using System.Globalization;
using System.Runtime;
using Camdoop.Experiments.Baselines;
using Camdoop.KeyRouting;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Records;
using Camdoop.MapReduce.Reference;
using Camdoop.MapReduce.Service;
using Camdoop.MapReduce.Trees;
using Camdoop.Monitoring.Control;
using Camdoop.Monitoring.Jobs;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>Where a <see cref="JobSimulation"/> is: phase ("input", "map", "shuffle"), fraction done, and a short detail.</summary>
public readonly record struct JobSimulationProgress(string Phase, double Fraction, string Detail);

/// <summary>
/// Runs one MapReduce job on a simulated CamCube (the Camdoop paper, §5): every server runs key routing and the Camdoop service;
/// each server's input is generated (or read from the user's files) and mapped outside virtual time (map costs no
/// simulated time, as in the paper, so the harness maps on all cores); then every server starts the shuffle at the
/// same virtual time t0 and the run ends when every reduce task has written its output. Reports sizes, S, the
/// shuffle-and-reduce time, link and hop counts, per-server aggregated bytes, the switch lower bounds over the same
/// intermediate data, and wall-clock costs. Deterministic for given options.
/// </summary>
public static partial class JobSimulation
{
    public static JobSimulationResult Run(JobSimulationOptions options, IProgress<JobSimulationProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var wall = Stopwatch.StartNew();
        using var input = JobSimulationInput.Prepare(options, keepInputs: options.Verify, progress: progress);
        var result = Run(options, input, progress);
        return result with { WallSeconds = wall.Elapsed.TotalSeconds };
    }

    /// <summary>Sets the run's rate limits on one server, as the monitoring service does when a limit reaches it.</summary>
    internal static void ApplyLimits(CamdoopService server, IReadOnlyList<RateLimit> limits)
    {
        var jobs = new CamdoopJobSource(server);
        foreach (var limit in limits)
        {
            RateLimits.Apply(server.Context, jobs, limit);
        }
    }

    /// <summary>
    /// Runs the shuffle and reduce over inputs already mapped (<see cref="JobSimulationInput.Prepare"/>), which
    /// runs differing only in mode or service settings share.
    /// </summary>
    public static JobSimulationResult Run(JobSimulationOptions options, JobSimulationInput input, IProgress<JobSimulationProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(input);
        options.Validate();
        if (input.ReduceTasks != options.ReduceTasks || input.MapOutputs.Count != options.Torus.Count)
        {
            throw new ArgumentException($"the input was mapped for R = {input.ReduceTasks} on {input.MapOutputs.Count} servers");
        }
        if (options.Mode == ShuffleMode.Tcp)
        {
            return RunDirect(options, input, progress);
        }
        var wall = Stopwatch.StartNew();
        var torus = options.Torus;
        int n = torus.Count;
        var job = input.Job;
        var description = Describe(options);
        var simOptions = SimulationOptionsFor(options);
        var serviceOptions = options.Service ?? new CamdoopServiceOptions();
        var services = new CamdoopService[n];
        var watch = options.Failures.Count > 0 ? new FailureWatch() : null;
        var queries = new SimulatedQueries(options.Queries, options.QueryFrom);
        using var sim = new Simulation(simOptions, host =>
        {
            var router = KeyRoutingService.Install(host);
            var camdoop = CamdoopService.Install(host, serviceOptions);
            services[torus.IndexOf(host.Self)] = camdoop;
            queries.Install(host, new CamdoopJobSource(camdoop));
            watch?.Attach(router, host);
        });
        options.Configure?.Invoke(sim);
        var maps = input.MapOutputs;
        var cpu = SimulationCpu.Start(sim);

        // Shuffle and reduce: every server starts at t0.
        var completions = new List<ReduceTaskResult>();
        var done = new HashSet<int>();
        var failures = new List<string>();
        sim.Start();
        // Partitions may report at once (simulation threads). A reduce task completes once; a second completion (a
        // root taken over twice while views of a failure differed) changes nothing.
        foreach (var service in services)
        {
            service.ReduceTaskCompleted += c =>
            {
                lock (completions)
                {
                    if (done.Add(c.ReduceTask))
                    {
                        completions.Add(c);
                    }
                }
            };
            service.JobFailed += j =>
            {
                lock (failures)
                {
                    failures.Add($"{service.Context.Self}: {j.Failure}");
                }
            };
        }
        // A failure before the start (@start) happens that long before it, so that the job starts without the server.
        long t0 = sim.Now + Math.Max(0, -options.Failures.Select(f => f.AtNanoseconds).DefaultIfEmpty(0).Min());
        // On the partitions' threads: building the vertices is a run's only serial work otherwise (R = 512 on 8x8x8:
        // 4.1 s on one thread).
        var mapTasks = new SimulatedMapTasks(torus, input, options.MapServers);
        sim.Schedule(t0, () => sim.ForEachServer(s =>
        {
            if (!sim.IsServerFailed(torus.CoordinateOf(s)))
            {
                ApplyLimits(services[s], options.Limits);
                services[s].StartJob(description, mapTasks.Maps(s) ? [maps[s]] : [], mapTasks);
            }
        }));
        queries.Start(sim, t0);
        foreach (var failure in options.Failures)
        {
            long at = t0 + failure.AtNanoseconds;
            // The job's coordinator knows which reduce tasks have written their output: a root that fails after it did
            // is not started over.
            sim.Schedule(at, () =>
            {
                foreach (var c in completions)
                {
                    foreach (var service in services)
                    {
                        service.GetJob(description.JobId)?.NoteReduceTaskDone(c.ReduceTask);
                    }
                }
            });
            if (failure.LinkPort is { } port)
            {
                sim.FailLink(failure.Server, port, at);
            }
            else
            {
                sim.FailServer(failure.Server, at);
            }
        }
        bool completed = RunShuffle(sim, options, completions, failures, progress, t0);

        // The job's energy ends with it, before the queries' last round.
        var energy = options.Energy is null ? null : sim.MeasureEnergy(JobEnd(sim, completions));
        if (queries.Any)
        {
            // One more round after the job: the queries see its end state.
            sim.RunFor(options.QueryTailNs > 0 ? options.QueryTailNs : queries.LongestInterval + (queries.LongestInterval / 2));
        }
        double cpuSeconds = cpu.Seconds(sim);
        options.Inspect?.Invoke(sim, services);
        var result = Collect(options, [description], sim, services, [maps], completions, failures, completed, t0, input.InputBytes);
        if (watch is not null)
        {
            result = result with { Failures = watch.Report(options.Failures, torus, t0), Recovery = Recovery(services) };
        }
        return Finish(result with { Queries = queries.Results(), Energy = energy }, options, input, completions, completed, cpuSeconds, wall);
    }

    /// <summary>
    /// The end of every single-job run, whatever its shuffle: the run's costs, the outputs copied out and checked
    /// against the reference, and the reducers pointed at the copies (the simulation's directories go with it).
    /// </summary>
    private static JobSimulationResult Finish(JobSimulationResult result, JobSimulationOptions options, JobSimulationInput input,
        List<ReduceTaskResult> completions, bool completed, double cpuSeconds, Stopwatch wall)
    {
        result = result with
        {
            SimulationCpuSeconds = cpuSeconds,
            MapWallSeconds = input.WallSeconds,
            MapOutputOnDisk = input.OnDisk,
            Machine = HostMachine.Current,
        };
        if (options.OutputDirectory is not null)
        {
            CopyOutputs(completions, options.OutputDirectory);
        }
        if (options.Verify && completed)
        {
            result = input.Inputs is null
                ? result with { Verified = false, VerificationError = "the inputs were not kept for the reference check" }
                : Verify(result, input.Job, input.Inputs, completions);
        }
        result = result with
        {
            Reducers = result.Reducers.Select(r => r with
            {
                OutputFile = options.OutputDirectory is null || r.OutputFile is null ? null : Path.Combine(options.OutputDirectory, Path.GetFileName(r.OutputFile)),
            }).ToList(),
        };
        return result with { WallSeconds = wall.Elapsed.TotalSeconds + input.WallSeconds };
    }

    /// <summary>The description every server starts the job of <paramref name="options"/> with.</summary>
    internal static JobDescription Describe(JobSimulationOptions options) => new()
    {
        JobId = options.JobId,
        Job = JobSpec.Parse(options.Job ?? BuiltInJob(options.Workload)),
        ReduceTasks = options.ReduceTasks,
        Mode = options.Mode,
        Trees = options.Trees,
        ReplicateOutput = options.ReplicateOutput,
        Roots = options.Roots,
        Output = options.WriteOutputFiles || options.OutputDirectory is not null ? OutputTarget.LocalFiles() : OutputTarget.Discard,
    };

    /// <summary>The simulated cube of <paramref name="options"/>: its size, links, seed, threads and liveness beacons.</summary>
    internal static SimulationOptions SimulationOptionsFor(JobSimulationOptions options) => new()
    {
        Torus = options.Torus,
        Seed = options.Seed,
        LinkRateBitsPerSecond = options.LinkRateBitsPerSecond,
        LossRate = options.LossRate,
        Energy = options.Energy,
        Compute = options.Compute?.Rates,
        LogSink = options.LogSink,
        DataRoot = options.DataRoot,
        Threads = options.SimulationThreads > 0 ? options.SimulationThreads : Environment.ProcessorCount,
        // Without failures liveness beacons can be rare: they would otherwise be a third of the events. With them,
        // servers detect failures as a real node does.
        Node = options.Failures.Count > 0 || options.NodeBeacons
            ? SimulationOptions.DefaultNodeOptions
            : SimulationOptions.DefaultNodeOptions with { BeaconInterval = 100 * SimTime.Millisecond },
    };

    /// <summary>
    /// Runs the shuffle until every reduce task is done, a server fails the job, or the time limit; reports progress
    /// every 200,000 events. True when every reduce task finished and nothing failed.
    /// </summary>
    private static bool RunShuffle(Simulation sim, JobSimulationOptions options, List<ReduceTaskResult> completions, List<string> failures,
        IProgress<JobSimulationProgress>? progress, long t0) =>
        RunShuffle(sim, () => completions.Count, options.ReduceTasks, failures, t0 + options.TimeLimit, "", progress, t0);

    /// <summary>
    /// Runs the shuffle until <paramref name="finished"/> reaches <paramref name="tasks"/> reduce tasks, a server
    /// fails a job (<paramref name="failures"/>), or <paramref name="deadline"/>; reports progress every 200,000
    /// events, each line after <paramref name="label"/>. True when every reduce task finished and nothing failed.
    /// </summary>
    internal static bool RunShuffle(Simulation sim, Func<int> finished, int tasks, List<string> failures, long deadline, string label,
        IProgress<JobSimulationProgress>? progress, long t0)
    {
        long nextReport = 0;
        // Hundreds of thousands of long-lived vertex objects: favour throughput over GC pause times while running.
        var latency = GCSettings.LatencyMode;
        GCSettings.LatencyMode = GCLatencyMode.Batch;
        bool completed;
        try
        {
            completed = sim.RunUntil(() =>
            {
                if (progress is not null && sim.EventsProcessed >= nextReport)
                {
                    nextReport = sim.EventsProcessed + 200_000;
                    progress.Report(new JobSimulationProgress("shuffle", (double)finished() / tasks,
                        string.Create(CultureInfo.InvariantCulture, $"{label}{finished()}/{tasks} reducers done at {(sim.Now - t0) / 1e9:0.000} s simulated")));
                }
                return finished() == tasks || failures.Count > 0;
            }, deadline, checkEvery: 64);
        }
        finally
        {
            GCSettings.LatencyMode = latency;
        }
        completed &= failures.Count == 0 && finished() == tasks;
        progress?.Report(new JobSimulationProgress("shuffle", 1, $"{label}{finished()}/{tasks} reducers done"));
        return completed;
    }

    /// <summary>When the last reducer finished (now, if none did): where the job's time and energy end.</summary>
    private static long JobEnd(Simulation sim, List<ReduceTaskResult> completions) =>
        completions.Count == 0 ? sim.Now : completions.Max(c => c.CompletedAt);

    /// <summary>The built-in job of a generated workload.</summary>
    public static string BuiltInJob(Workload workload) => workload switch
    {
        Workload.Synthetic => SyntheticJob.JobName,
        Workload.Sort => SortJob.JobName,
        Workload.WordCount => WordCountJob.JobName,
        Workload.TopK => TopKJob.JobName,
        _ => throw new ArgumentException("a files workload names its job explicitly", nameof(workload)),
    };

    /// <summary>
    /// What the run of the jobs of <paramref name="descriptions"/> (one, or several at once) measured: their sizes
    /// summed, the switch bounds over all their intermediate data, the cube's link and transport counters, and the time
    /// from t0 to the last reducer of any of them. Job, R, mode and trees are the first job's.
    /// </summary>
    internal static JobSimulationResult Collect(JobSimulationOptions options, IReadOnlyList<JobDescription> descriptions, Simulation sim,
        CamdoopService[] services, IReadOnlyList<IReadOnlyList<MapOutput>> maps, List<ReduceTaskResult> completions, List<string> failures, bool completed, long t0, long inputBytes)
    {
        var torus = options.Torus;
        int n = torus.Count;
        var description = descriptions[0];
        var roots = descriptions.SelectMany(d => JobPlacement.For(torus, d).RootIndices).ToArray();
        var demand = new ShuffleDemand(n, roots);
        long intermediate = 0, intermediateEncoded = 0;
        for (int j = 0, first = 0; j < descriptions.Count; first += descriptions[j].ReduceTasks, j++)
        {
            for (int s = 0; s < n; s++)
            {
                var stats = maps[j][s].Stats;
                intermediate += stats.IntermediateLogicalBytes;
                intermediateEncoded += stats.IntermediateEncodedBytes;
                for (int r = 0; r < descriptions[j].ReduceTasks; r++)
                {
                    demand.Add(s, first + r, stats.EncodedBytesPerReduceTask[r]);
                }
            }
        }
        var bounds = SwitchLowerBounds.Compute(demand);
        long output = completions.Sum(c => c.LogicalBytes);
        long dataByteHops = 0, dataSent = 0, dataFrames = 0, ackFrames = 0, retransmitted = 0, timeouts = 0;
        var aggregated = new List<long>(n);
        var bufferPeaks = new List<long>(n);
        foreach (var service in services)
        {
            bufferPeaks.Add(service.Transport.Buffers.PeakRentedBytes);
            var counters = service.Counters;
            dataByteHops += counters.DataByteHops;
            dataSent += counters.DataBytesSent;
            dataFrames += counters.DataFramesSent;
            ackFrames += counters.AckFramesSent;
            retransmitted += counters.RetransmittedBytes;
            timeouts += counters.Timeouts;
            aggregated.Add(descriptions.Sum(d => service.GetJob(d.JobId)?.AggregatedBytes ?? 0));
        }
        var links = sim.LinkTotals;
        long busiestBytes = 0, busiestTime = 0;
        foreach (var link in sim.Links)
        {
            busiestBytes = Math.Max(busiestBytes, link.Bytes);
            busiestTime = Math.Max(busiestTime, link.BusyTime);
        }
        long last = JobEnd(sim, completions);
        return new JobSimulationResult
        {
            Torus = torus.ToString(),
            Servers = n,
            Job = description.Job.ToString(),
            Workload = options.Workload.ToString().ToLowerInvariant(),
            Mode = description.Mode.Name(),
            ReduceTasks = description.ReduceTasks,
            Trees = description.Trees.Name(),
            Completed = completed,
            InputBytes = inputBytes,
            IntermediateBytes = intermediate,
            IntermediateEncodedBytes = intermediateEncoded,
            OutputBytes = output,
            OutputRecords = completions.Sum(c => c.Records),
            OutputRatio = intermediate == 0 ? 0 : (double)output / intermediate,
            ShuffleReduceSeconds = (last - t0) / 1e9,
            LowerBounds = new LowerBounds(bounds.Switch1G, bounds.Switch6G, bounds.Switch1GOversubscribed),
            LinkBytes = links.Bytes,
            LinkFrames = links.Frames,
            BusiestLinkBytes = busiestBytes,
            BusiestLinkBusySeconds = busiestTime / 1e9,
            DataByteHops = dataByteHops,
            DataBytesSent = dataSent,
            DataFrames = dataFrames,
            AckFrames = ackFrames,
            RetransmittedBytes = retransmitted,
            Timeouts = timeouts,
            FramesDropped = links.Drops,
            AggregatedBytes = Distribution.Of(aggregated),
            ShuffleBufferPeakBytes = Distribution.Of(bufferPeaks),
            // Several jobs number their reduce tasks alike: theirs are reported per job.
            Reducers = descriptions.Count == 1 ? Outcomes(completions, t0) : [],
            Errors = failures,
            WallSeconds = 0,
            MapWallSeconds = 0,
            SimulationWallSeconds = sim.WallTime.TotalSeconds,
            Events = sim.EventsProcessed,
            FrameEvents = sim.FrameEventsProcessed,
            SimulationCpuSeconds = 0,
            Compute = options.Compute is null ? null : ComputeReport.Of(options.Compute, sim, maps, t0, last),
            Energy = options.Energy is null ? null : sim.MeasureEnergy(last),
        };
    }

    private static RecoveryReport Recovery(CamdoopService[] services)
    {
        long resent = 0, reruns = 0, adopted = 0, kept = 0, regenerated = 0, resumes = 0;
        foreach (var service in services)
        {
            var c = service.Counters;
            resent += c.ResentBytes;
            reruns += c.MapTasksRerun;
            adopted += c.VerticesAdopted;
            kept += c.RestartsFromKept;
            regenerated += c.Regenerations;
            resumes += c.ResumesSent;
        }
        return new RecoveryReport(resent, reruns, adopted, kept, regenerated, resumes, null, null);
    }

    /// <summary>Compares every reduce output with the single-process reference MapReduce over the same inputs.</summary>
    private static JobSimulationResult Verify(JobSimulationResult result, IMapReduceJob job, IReadOnlyList<byte[]> inputs, List<ReduceTaskResult> completions)
    {
        string? error = CheckOutputs(job, inputs, result.ReduceTasks, completions);
        return result with { Verified = error is null, VerificationError = error };
    }

    /// <summary>Each reduce task's outcome, in task order, its time from t0.</summary>
    internal static List<ReducerOutcome> Outcomes(IEnumerable<ReduceTaskResult> completions, long t0) =>
        completions.OrderBy(c => c.ReduceTask).Select(c => new ReducerOutcome(
            c.ReduceTask, c.Server.ToString(), (c.CompletedAt - t0) / 1e9, c.Records, c.LogicalBytes,
            c.Checksum.ToString("x16", CultureInfo.InvariantCulture), c.OutputPath)).ToList();

    /// <summary>
    /// Null when every reduce output (records, checksum, formatted file) equals the single-process reference's over
    /// <paramref name="inputs"/>; else what differs first.
    /// </summary>
    internal static string? CheckOutputs(IMapReduceJob job, IReadOnlyList<byte[]> inputs, int reduceTasks, IEnumerable<ReduceTaskResult> completions)
    {
        var reference = ReferenceMapReduce.Run(job, inputs.Select(i => (ReadOnlyMemory<byte>)i).ToList(), reduceTasks);
        foreach (var c in completions.OrderBy(c => c.ReduceTask))
        {
            var expected = reference.Outputs[c.ReduceTask];
            var stream = new XxHash64();
            var record = new byte[256];
            foreach (var (key, value) in expected)
            {
                int length = RecordCodec.EncodedLength(key.Length, value.Length);
                if (record.Length < length)
                {
                    record = new byte[length];
                }
                stream.Append(record.AsSpan(0, RecordCodec.Write(record, key, value)));
            }
            string? error = null;
            if (expected.Count != c.Records)
            {
                error = $"reduce task {c.ReduceTask}: {c.Records} records, the reference has {expected.Count}";
            }
            else if (stream.GetDigest() != c.Checksum)
            {
                error = $"reduce task {c.ReduceTask}: output records differ from the reference";
            }
            else if (c.OutputPath is not null && !File.ReadAllBytes(c.OutputPath).AsSpan().SequenceEqual(reference.Format(c.ReduceTask)))
            {
                error = $"reduce task {c.ReduceTask}: output file {c.OutputPath} differs from the reference's formatted output";
            }
            if (error is not null)
            {
                return error;
            }
        }
        return null;
    }

    internal static void CopyOutputs(List<ReduceTaskResult> completions, string directory)
    {
        Directory.CreateDirectory(directory);
        foreach (var c in completions)
        {
            if (c.OutputPath is not null)
            {
                File.Copy(c.OutputPath, Path.Combine(directory, Path.GetFileName(c.OutputPath)), overwrite: true);
            }
        }
    }
}
