using System.Diagnostics;
using System.Globalization;
using System.Runtime;
using Camdoop.Experiments.Baselines;
using Camdoop.JobControl.Wire;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Reference;
using Camdoop.MapReduce.Service;
using Camdoop.MapReduce.Trees;
using Camdoop.Monitoring.Control;
using Camdoop.Records;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Server;
using Camdoop.Simulator.Energy;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>Where a <see cref="JobSimulation"/> is: phase ("input", "map", "shuffle"), fraction done, and a short detail.</summary>
public readonly record struct JobSimulationProgress(string Phase, double Fraction, string Detail);

/// <summary>
/// Runs one MapReduce job on a simulated CamCube (the Camdoop paper, §5), or on servers wired to switches: every server
/// runs the services of a real one (<see cref="Server.ServerStack"/>); the job's input is placed on the servers' disks
/// as a dataset and the job is submitted to the job control of the server that coordinates it, exactly as a client
/// does on a cube. The servers map their chunks (no virtual time, as in the paper), the coordinator starts the shuffle
/// once every one has, and the run ends when the coordinator knows every reduce task's output. Reports sizes, S, the
/// shuffle-and-reduce time (from the coordinator's start of the shuffle to the last reducer's end), link and hop
/// counts, per-server aggregated bytes, the switch lower bounds over the same intermediate data, and wall-clock costs.
/// Deterministic for given options.
/// </summary>
public static partial class JobSimulation
{
    public static JobSimulationResult Run(JobSimulationOptions options, IProgress<JobSimulationProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var wall = Stopwatch.StartNew();
        using var input = JobSimulationInput.Prepare(options, keepInputs: options.Settings.Verify, progress: progress);
        var result = Run(options, input, progress);
        return result with { WallSeconds = wall.Elapsed.TotalSeconds };
    }

    /// <summary>Sets the run's rate limits on one server, as the monitoring service does when a limit reaches it.</summary>
    internal static void ApplyLimits(INodeContext server, CamdoopService? camdoop, IReadOnlyList<RateLimit> limits)
    {
        var jobs = camdoop is null ? null : new CamdoopJobSource(camdoop);
        foreach (var limit in limits)
        {
            RateLimits.Apply(server, jobs, limit);
        }
    }

    /// <summary>
    /// Runs the job over an input already written (<see cref="JobSimulationInput.Prepare"/>), which runs differing
    /// only in mode, service settings or failures share: it is submitted to the job control of the server that
    /// coordinates it, every server maps its chunks and the coordinator starts the shuffle. Failures happen at their
    /// times after the shuffle starts (before the job is submitted for @start, halfway through the map phase for @map).
    /// </summary>
    public static JobSimulationResult Run(JobSimulationOptions options, JobSimulationInput input, IProgress<JobSimulationProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(options);
        ArgumentNullException.ThrowIfNull(input);
        options.Validate();
        if (input.ReduceTasks != options.ReduceTasks || input.ServerCount != options.Torus.Count)
        {
            throw new ArgumentException($"the input was written for R = {input.ReduceTasks} on {input.ServerCount} servers");
        }
        var wall = Stopwatch.StartNew();
        var description = Describe(options);
        double mapCpu = input.MapTasks.CpuSeconds;
        input.MapTasks.StartRun();
        input.MapAll();
        // When the shuffle will start after the submission: failures are timed from it, and a run is the same to the
        // nanosecond until its first failure, so a rehearsal without the later failures tells. The job's energy is
        // measured from that start to its last reducer's end: a rehearsal of the whole run tells when that is.
        bool energy = options.Settings.Energy is not null;
        long? shuffleOffset = options.Failures.Any(f => f.AtNanoseconds >= 0 || f.DuringMap) || energy || options.AtShuffleStart is not null
            ? Rehearse(options, input, null).Shuffle
            : null;
        long? endOffset = energy ? Rehearse(options, input, shuffleOffset).End : null;
        using var cube = new SimulatedCube(options, [input], watchFailures: options.Failures.Count > 0 && options.Network is null);
        var sim = cube.Sim;
        var cpu = SimulationCpu.Start(sim);
        double mapCpuInRun = input.MapTasks.CpuSeconds;
        var (job, queries, detected, injected) = Schedule(cube, options, input, description, shuffleOffset);
        if (options.AtShuffleStart is { } atStart)
        {
            atStart(sim, job.SubmittedAtScheduled + shuffleOffset!.Value);
        }
        NetworkEnergy? energyAtStart = null, energyAtEnd = null;
        if (energy)
        {
            long start = job.SubmittedAtScheduled + shuffleOffset!.Value, end = job.SubmittedAtScheduled + endOffset!.Value;
            sim.Schedule(start, () => energyAtStart = sim.MeasureEnergy(start));
            sim.Schedule(end, () => energyAtEnd = sim.MeasureEnergy(end));
        }
        bool completed = RunJobs(cube, [job], options.TimeLimit, "", progress);
        long t0 = job.ShuffleStartedAt > 0 ? job.ShuffleStartedAt : job.SubmittedAt;
        var completions = Completions(cube, job, description.ReduceTasks);
        var failures = Errors(cube, job);
        if (job.ShuffleStartedAt == 0 && job.Current is { State: JobState.Failed, Failure: { } mapFailure })
        {
            // Failed before its shuffle: its input cannot be read (a partial record, an over-long line or key).
            throw new InvalidDataException(mapFailure);
        }
        completed &= failures.Count == 0;
        // The job's energy ends with it, before the queries' last round.
        var spent = energyAtStart is not null && energyAtEnd is not null ? energyAtEnd.Since(energyAtStart) : null;
        if (queries.Any)
        {
            // One more round after the job: the queries see its end state.
            sim.RunFor(options.QueryTailNs > 0 ? options.QueryTailNs : queries.LongestInterval + (queries.LongestInterval / 2));
        }
        double cpuSeconds = cpu.Seconds(sim) - (input.MapTasks.CpuSeconds - mapCpuInRun);
        JobSimulationResult result;
        if (options.Network is null)
        {
            var services = cube.CamdoopServices;
            options.Inspect?.Invoke(sim, services, [.. Enumerable.Range(0, services.Count).Select(s => cube.ServerJobOf(s, description.JobId))]);
            result = Collect(options, [description], sim, services, cube.ServerJobOf, [input.MapOutputs], completions, failures, completed, t0, input.InputBytes);
            if (options.Failures.Count > 0)
            {
                result = result with { Failures = cube.FailureReports(options.Failures, injected, t0), Recovery = Recovery(services) };
            }
        }
        else
        {
            result = CollectDirect(options, description, cube, input, completions, failures, completed, t0) with
            {
                Failures = [.. options.Failures.Select(f => new FailureReport(f.What, f.Server.Name, null,
                    ((injected.TryGetValue(f, out long at) ? at : t0 + f.AtNanoseconds) - t0) / 1e9,
                    detected.TryGetValue(f.What, out long d) ? (d - t0) / 1e9 : null))],
            };
        }
        result = result with
        {
            Queries = queries.Results(),
            Energy = spent,
            Coordinator = job.FirstCoordinator.ToString(),
            Takeovers = Takeovers(cube),
            Attempts = job.Current?.Attempt ?? 0,
        };
        return Finish(result, options, input, completions, completed, cpuSeconds, wall);
    }

    /// <summary>
    /// Submits the job to <paramref name="cube"/> (after the @start failures, which are that long before it), applies
    /// the run's rate limits, starts its queries and schedules its other failures. Returns when each failure of a
    /// switched network was detected.
    /// </summary>
    private static (SubmittedJob Job, SimulatedQueries Queries, Dictionary<string, long> Detected, Dictionary<InjectedFailure, long> Injected) Schedule(
        SimulatedCube cube, JobSimulationOptions options, JobSimulationInput input, JobDescription description, long? shuffleOffset)
    {
        var sim = cube.Sim;
        long lead = Math.Max(0, -options.Failures.Where(f => !f.DuringMap).Select(f => f.AtNanoseconds).DefaultIfEmpty(0).Min());
        long submit = sim.Now + lead;
        var detected = new Dictionary<string, long>();
        var injected = new Dictionary<InjectedFailure, long>();
        void Inject(InjectedFailure failure, long at)
        {
            injected[failure] = at;
            if (failure.LinkPort is { } port)
            {
                sim.FailLink(failure.Server, port, at);
            }
            else if (cube.Fail(failure.Server, at) is { } when)
            {
                detected[failure.What] = when;
            }
        }
        foreach (var failure in options.Failures.Where(f => f.AtNanoseconds < 0 && !f.DuringMap))
        {
            Inject(failure, submit + failure.AtNanoseconds);
        }
        var job = cube.Submit(description, input, submit, options.Limits, options.Aggregated);
        var queries = new SimulatedQueries(options.Queries, options.QueryFrom);
        queries.Start(sim, submit);
        if (shuffleOffset is { } offset)
        {
            foreach (var failure in options.Failures.Where(f => f.AtNanoseconds >= 0 || f.DuringMap))
            {
                Inject(failure, failure.DuringMap ? submit + (offset / 2) : submit + offset + failure.AtNanoseconds);
            }
        }
        return (job, queries, detected, injected);
    }

    /// <summary>
    /// The same run up to its shuffle's start, without the failures timed from it (<paramref name="shuffleOffset"/>
    /// null), or to its last reducer's end, with every failure: how long after the submission each comes.
    /// </summary>
    private static (long Shuffle, long End) Rehearse(JobSimulationOptions options, JobSimulationInput input, long? shuffleOffset)
    {
        // The rehearsal is the run's own (its configuration, not what is looked at or injected relative to its start).
        using var cube = new SimulatedCube(options with { AtShuffleStart = null }, [input]);
        var description = Describe(options);
        var (job, _, _, _) = Schedule(cube, options, input, description, shuffleOffset);
        bool toEnd = shuffleOffset is not null;
        cube.Sim.RunUntil(() => (!toEnd && job.ShuffleStartedAt > 0) || job.Finished || job.Current?.IsOver == true, cube.Sim.Now + options.TimeLimit);
        if (job.ShuffleStartedAt == 0 || (toEnd && !job.Finished))
        {
            throw new InvalidOperationException($"the job did not {(toEnd ? "finish" : "start its shuffle")}: {job.Current?.Failure ?? "the time limit passed"}");
        }
        long end = toEnd ? JobEnd(cube.Sim, Completions(cube, job, description.ReduceTasks)) : 0;
        return (job.ShuffleStartedAt - job.SubmittedAt, end - job.SubmittedAt);
    }

    /// <summary>The energy spent after <paramref name="start"/>, when measured; all of it when not.</summary>
    internal static NetworkEnergy Since(NetworkEnergy end, NetworkEnergy? start) => start is null ? end : end.Since(start);

    /// <summary>Jobs taken over from a coordinator that died, over every server.</summary>
    private static int Takeovers(SimulatedCube cube)
    {
        int takeovers = 0;
        for (int h = 0; h < cube.Sim.Torus.Count; h++)
        {
            takeovers += cube.Stack(h)?.JobControl.Takeovers ?? 0;
        }
        return takeovers;
    }

    /// <summary>
    /// The job's result as its coordinator has it: each reduce task's output where the coordinator took it from, with
    /// the completion its root reported (its time, its file). Empty for tasks not done.
    /// </summary>
    internal static List<ReduceTaskResult> Completions(SimulatedCube cube, SubmittedJob job, int reduceTasks)
    {
        var results = new List<ReduceTaskResult>();
        if (job.Current is not { } tracker)
        {
            return results;
        }
        ulong shuffleId = tracker.Description.JobId;
        var reported = cube.Completions.Where(c => c.JobId == shuffleId).ToList();
        for (int r = 0; r < reduceTasks; r++)
        {
            if (tracker.Reduces[r] is not { } done)
            {
                continue;
            }
            // The last completion the reporting server made of it (a task rerooted back to one server completes twice).
            var completion = reported.LastOrDefault(c => c.ReduceTask == r && c.Server == done.Server);
            if (completion is not null)
            {
                results.Add(completion);
            }
        }
        return results;
    }

    /// <summary>Why the job did not complete: its coordinator's reason and the servers' shuffle errors.</summary>
    internal static List<string> Errors(SimulatedCube cube, SubmittedJob job)
    {
        var errors = new List<string>(cube.ShuffleErrors);
        if (job.Current is { State: JobState.Failed or JobState.Killed, Failure: { } failure } && !errors.Any(e => e.Contains(failure, StringComparison.Ordinal)))
        {
            errors.Insert(0, failure);
        }
        return errors;
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
            MapWallSeconds = input.WallSeconds + input.MapTasks.WallSeconds,
            SimulationWallSeconds = Math.Max(0, result.SimulationWallSeconds - input.MapTasks.WallSeconds),
            MapOutputOnDisk = input.OnDisk,
            Machine = HostMachine.Current,
        };
        if (options.OutputDirectory is not null)
        {
            CopyOutputs(completions, options.OutputDirectory);
        }
        if (options.Settings.Verify && completed)
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
        Trees = options.Settings.Trees,
        ReplicateOutput = options.ReplicateOutput,
        Roots = options.Roots,
        Output = options.WriteOutputFiles || options.OutputDirectory is not null ? OutputTarget.LocalFiles() : OutputTarget.Discard,
    };

    /// <summary>The simulated cube of <paramref name="options"/>: its size, links, seed, threads and liveness beacons.</summary>
    internal static SimulationOptions SimulationOptionsFor(JobSimulationOptions options) => new()
    {
        Torus = options.Torus,
        Seed = options.Settings.Seed,
        LinkRateBitsPerSecond = options.LinkRateBitsPerSecond,
        LossRate = options.LossRate,
        Energy = options.Settings.Energy,
        Compute = options.Settings.Compute?.Rates,
        LogSink = options.LogSink,
        TraceEvents = options.TraceEvents,
        DataRoot = options.Settings.DataRoot ?? Path.Combine(SimulationScratch.RootFor(options), "camdoop-sim"),
        // A traced run is one partition: the hash then does not depend on how servers were split among threads.
        Threads = options.TraceEvents ? 1
            : options.SimulationThreads > 0 ? options.SimulationThreads : JobSimulationOptions.DefaultSimulationThreads(options.Torus.Count),
        // Without failures liveness beacons can be rare: they would otherwise be a third of the events. With them,
        // servers detect failures as a real node does.
        Node = options.Failures.Count > 0 || options.NodeBeacons
            ? SimulationOptions.DefaultNodeOptions
            : SimulationOptions.DefaultNodeOptions with { BeaconInterval = 100 * SimTime.Millisecond },
    };

    /// <summary>
    /// Runs until every one of <paramref name="jobs"/> is finished at its coordinator (or one failed), then until every
    /// server has acknowledged its end, then on to a fixed time after that: the run's counters (link bytes, frames)
    /// then hold the job's control messages and nothing a thread count could change (a parallel run notices the end
    /// up to a bound of link delays late). Gives up <paramref name="timeLimit"/> after the start. Reports progress
    /// every 200,000 events, each line after <paramref name="label"/>. True when every job finished and nothing failed.
    /// </summary>
    internal static bool RunJobs(SimulatedCube cube, IReadOnlyList<SubmittedJob> jobs, long timeLimit, string label,
        IProgress<JobSimulationProgress>? progress)
    {
        var sim = cube.Sim;
        long nextReport = 0;
        long deadline = sim.Now + timeLimit;
        int tasks = 0;
        int Done()
        {
            int done = 0;
            tasks = 0;
            foreach (var job in jobs)
            {
                if (job.Current is { } t)
                {
                    done += t.ReducesDone;
                    tasks += t.Description.ReduceTasks;
                }
            }
            return done;
        }
        bool Failed() => jobs.Any(j => j.Current is { State: JobState.Failed or JobState.Killed });
        bool Over() => jobs.All(j => j.Finished) || Failed();
        // Hundreds of thousands of long-lived vertex objects: favour throughput over GC pause times while running.
        var latency = GCSettings.LatencyMode;
        GCSettings.LatencyMode = GCLatencyMode.Batch;
        try
        {
            sim.RunUntil(() =>
            {
                if (progress is not null && sim.EventsProcessed >= nextReport)
                {
                    nextReport = sim.EventsProcessed + 200_000;
                    int done = Done();
                    progress.Report(new JobSimulationProgress("shuffle", tasks == 0 ? 0 : (double)done / tasks,
                        string.Create(CultureInfo.InvariantCulture, $"{label}{done}/{tasks} reducers done at {sim.Now / 1e9:0.000} s simulated")));
                }
                return Over();
            }, deadline, checkEvery: 64);
            if (Over())
            {
                sim.RunUntil(() => jobs.All(j => j.Current is not { EndedAt: 0 }), deadline);
                long ended = jobs.Max(j => j.Current?.EndedAt ?? sim.Now);
                long quiet = ended + (sim.Lookahead > 0 ? 128 * sim.Lookahead : SimTime.Millisecond);
                if (sim.Now < quiet && quiet < deadline)
                {
                    sim.RunUntil(quiet);
                }
            }
        }
        finally
        {
            GCSettings.LatencyMode = latency;
        }
        int finished = Done();
        progress?.Report(new JobSimulationProgress("shuffle", 1, $"{label}{finished}/{tasks} reducers done"));
        return jobs.All(j => j.Finished) && !Failed() && cube.ShuffleErrors.Count == 0;
    }

    /// <summary>When the last reducer finished (now, if none did): where the job's time and energy end.</summary>
    internal static long JobEnd(Simulation sim, List<ReduceTaskResult> completions) =>
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
        IReadOnlyList<CamdoopService> services, Func<int, ulong, ServerJob?> jobOf, IReadOnlyList<IReadOnlyList<MapOutput>> maps, List<ReduceTaskResult> completions, List<string> failures, bool completed, long t0, long inputBytes)
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
        for (int s = 0; s < services.Count; s++)
        {
            var service = services[s];
            bufferPeaks.Add(service.Transport.Buffers.PeakRentedBytes);
            var counters = service.Counters;
            dataByteHops += counters.DataByteHops;
            dataSent += counters.DataBytesSent;
            dataFrames += counters.DataFramesSent;
            ackFrames += counters.AckFramesSent;
            retransmitted += counters.RetransmittedBytes;
            timeouts += counters.Timeouts;
            aggregated.Add(descriptions.Sum(d => jobOf(s, d.JobId)?.AggregatedBytes ?? 0));
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
            EventTraceHash = TraceHash(sim),
            SimulationCpuSeconds = 0,
            Compute = options.Settings.Compute is null ? null : ComputeReport.Of(options.Settings.Compute, sim, maps, t0, last),
            Energy = options.Settings.Energy is null ? null : sim.MeasureEnergy(last),
        };
    }

    /// <summary>The run's event trace hash as 16 hex digits, or null when it was not traced.</summary>
    internal static string? TraceHash(Simulation sim) => sim.Trace is { } trace ? trace.Hash.ToString("x16", CultureInfo.InvariantCulture) : null;

    private static RecoveryReport Recovery(IReadOnlyList<CamdoopService> services)
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
