using System.Diagnostics;
using System.Globalization;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.MapPhase;
using Camdoop.MapReduce.Service;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>
/// Runs several MapReduce jobs at once on one simulated CamCube (the Camdoop paper, §5.3, Figure 8): every server runs
/// its part of every job in the same Camdoop service, so each job has its own vertices, streams and trees, the
/// packet-buffer budget is split over the inbound streams of all of them, and each port's scheduler takes the jobs in
/// turn. Every job is submitted at the same virtual instant, each to its own coordinator, which starts its shuffle
/// once its servers have mapped (a few control messages apart from the others); each job's time runs from its own
/// start to its own last reducer, so nothing in it assumes that the others are there or that they are alike.
/// Deterministic for given jobs.
/// </summary>
public static class ConcurrentJobSimulation
{
    /// <summary>
    /// Generates and maps each job's input, runs each job alone when <paramref name="runAlone"/> (same servers,
    /// roots and data, so that its time at once can be normalised to it), then all of them at once.
    /// </summary>
    public static JobSimulationResult Run(IReadOnlyList<JobSimulationOptions> jobs, bool runAlone = true, IProgress<JobSimulationProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        var wall = Stopwatch.StartNew();
        var inputs = new List<JobSimulationInput>(jobs.Count);
        try
        {
            for (int k = 0; k < jobs.Count; k++)
            {
                inputs.Add(JobSimulationInput.Prepare(jobs[k], keepInputs: jobs[k].Settings.Verify, progress: progress, name: DatasetName(k)));
            }
            var alone = new double?[jobs.Count];
            for (int k = 0; runAlone && k < jobs.Count; k++)
            {
                var unverified = jobs[k] with { Settings = jobs[k].Settings with { Verify = false }, OutputDirectory = null };
                var single = JobSimulation.Run(unverified, inputs[k], progress);
                if (!single.Completed)
                {
                    throw new InvalidOperationException($"job {k} did not complete alone: {string.Join("; ", single.Errors)}");
                }
                alone[k] = single.ShuffleReduceSeconds;
            }
            var result = RunTogether(jobs, inputs, progress);
            return result with
            {
                Jobs = result.Jobs!.Select(j => j with
                {
                    AloneSeconds = alone[j.Index],
                    NormalizedTime = alone[j.Index] is > 0 and var a ? j.ShuffleReduceSeconds / a : null,
                }).ToList(),
                WallSeconds = wall.Elapsed.TotalSeconds,
            };
        }
        finally
        {
            foreach (var input in inputs)
            {
                input.Dispose();
            }
        }
    }

    /// <summary>
    /// Runs <paramref name="jobs"/> at once over inputs already mapped (<see cref="JobSimulationInput.Prepare"/>, one
    /// per job). The cube's settings (size, links, seed of the simulation, threads, service) are the first job's.
    /// </summary>
    public static JobSimulationResult RunTogether(IReadOnlyList<JobSimulationOptions> jobs, IReadOnlyList<JobSimulationInput> inputs,
        IProgress<JobSimulationProgress>? progress = null)
    {
        Check(jobs, inputs);
        var wall = Stopwatch.StartNew();
        var first = jobs[0];
        int count = jobs.Count;
        var descriptions = jobs.Select(JobSimulation.Describe).ToArray();
        foreach (var input in inputs)
        {
            input.MapTasks.StartRun();
            input.MapAll();
        }
        using var cube = new SimulatedCube(first, inputs);
        var sim = cube.Sim;
        var cpu = SimulationCpu.Start(sim);
        double mapCpu = inputs.Sum(i => i.MapTasks.CpuSeconds);
        // Every job is submitted at once; a job's time is measured from its own shuffle's start all the same.
        long at = sim.Now;
        var submitted = new SubmittedJob[count];
        for (int k = 0; k < count; k++)
        {
            submitted[k] = cube.Submit(descriptions[k], inputs[k], at, k == 0 ? first.Limits : null, jobs[k].Aggregated);
        }
        bool completed = JobSimulation.RunJobs(cube, submitted, jobs.Max(j => j.TimeLimit),
            string.Create(CultureInfo.InvariantCulture, $"{count} jobs: "), progress);

        double cpuSeconds = cpu.Seconds(sim) - (inputs.Sum(i => i.MapTasks.CpuSeconds) - mapCpu);
        IReadOnlyList<CamdoopService> services = first.Mode == ShuffleMode.Tcp ? [] : cube.CamdoopServices;
        first.Inspect?.Invoke(sim, services, [.. Enumerable.Range(0, services.Count).Select(s => cube.ServerJobOf(s, descriptions[0].JobId))]);
        var maps = inputs.Select(i => i.MapOutputs).ToArray();
        long t0 = submitted.Where(j => j.ShuffleStartedAt > 0).Select(j => j.ShuffleStartedAt).DefaultIfEmpty(at).Min();
        var completions = new List<ReduceTaskResult>[count];
        var failures = new List<string>(cube.ShuffleErrors);
        for (int k = 0; k < count; k++)
        {
            completions[k] = JobSimulation.Completions(cube, submitted[k], descriptions[k].ReduceTasks);
            if (submitted[k].Current is { Failure: { } failure })
            {
                failures.Add($"job {k}: {failure}");
            }
        }
        // On a switched network (TCP Camdoop jobs) the report's link and TCP counters are the whole run's, its sizes and
        // bounds the first job's; every job's own outcome follows.
        var result = first.Mode == ShuffleMode.Tcp
            ? JobSimulation.CollectDirect(first, descriptions[0], cube, inputs[0], completions[0], failures, completed, t0)
            : JobSimulation.Collect(first, descriptions, sim, services, cube.ServerJobOf, maps, [.. completions.SelectMany(c => c)], failures, completed, t0, inputs.Sum(i => i.InputBytes));
        var perJob = new ConcurrentJobResult[count];
        for (int k = 0; k < count; k++)
        {
            var job = submitted[k];
            long start = job.ShuffleStartedAt > 0 ? job.ShuffleStartedAt : at;
            var outcome = Outcome(k, jobs[k], descriptions[k], inputs[k], maps[k], completions[k], job.Current?.Failure, start, sim.Now);
            perJob[k] = outcome with { StartedAfterSeconds = (start - t0) / 1e9 };
        }
        var errors = perJob.Where(j => j.Verified == false).Select(j => $"job {j.Index}: {j.VerificationError}").ToList();
        double mapWall = inputs.Sum(i => i.MapTasks.WallSeconds);
        return result with
        {
            Jobs = perJob,
            Verified = perJob.Any(j => j.Verified is not null) ? errors.Count == 0 && perJob.All(j => j.Verified == true) : null,
            VerificationError = errors.Count > 0 ? string.Join("; ", errors) : null,
            SimulationCpuSeconds = cpuSeconds,
            MapWallSeconds = inputs.Sum(i => i.WallSeconds) + mapWall,
            SimulationWallSeconds = Math.Max(0, result.SimulationWallSeconds - mapWall),
            MapOutputOnDisk = inputs.Any(i => i.OnDisk),
            Machine = HostMachine.Current,
            WallSeconds = wall.Elapsed.TotalSeconds + inputs.Sum(i => i.WallSeconds),
            Coordinator = submitted[0].FirstCoordinator.ToString(),
        };
    }

    /// <summary>The dataset name of copy <paramref name="k"/>'s input: distinct, so that the copies' chunks are distinct.</summary>
    public static string DatasetName(int k) => k == 0 ? JobSimulationInput.DefaultName : string.Create(CultureInfo.InvariantCulture, $"input-{k}");

    /// <summary>One job's part of the run: its outputs copied and checked, its time from its own start.</summary>
    private static ConcurrentJobResult Outcome(int index, JobSimulationOptions options, JobDescription description, JobSimulationInput input,
        IReadOnlyList<MapOutput> maps, List<ReduceTaskResult> completions, string? failure, long start, long now)
    {
        var torus = options.Torus;
        bool completed = failure is null && completions.Count == options.ReduceTasks;
        if (options.OutputDirectory is not null)
        {
            JobSimulation.CopyOutputs(completions, options.OutputDirectory);
        }
        bool? verified = null;
        string? error = null;
        if (options.Settings.Verify && completed)
        {
            error = input.Inputs is null
                ? "the inputs were not kept for the reference check"
                : JobSimulation.CheckOutputs(input.Job, input.Inputs, options.ReduceTasks, completions);
            verified = error is null;
        }
        long last = completions.Count == 0 ? now : completions.Max(c => c.CompletedAt);
        return new ConcurrentJobResult
        {
            Index = index,
            JobId = description.JobId.ToString("x16", CultureInfo.InvariantCulture),
            Job = description.Job.ToString(),
            Seed = options.Settings.Seed,
            Mode = description.Mode.Name(),
            ReduceTasks = description.ReduceTasks,
            MapServers = options.MapServerList.Select(s => torus.CoordinateOf(s).ToString()).ToList(),
            Roots = JobPlacement.For(torus, description).RootIndices.Select(s => torus.CoordinateOf(s).ToString()).ToList(),
            Completed = completed,
            InputBytes = input.InputBytes,
            IntermediateBytes = maps.Sum(m => m.Stats.IntermediateLogicalBytes),
            OutputBytes = completions.Sum(c => c.LogicalBytes),
            OutputRecords = completions.Sum(c => c.Records),
            ShuffleReduceSeconds = (last - start) / 1e9,
            Verified = verified,
            VerificationError = error,
            // The simulation's directories go away with it: point at the copies, if any.
            Reducers = JobSimulation.Outcomes(completions, start).Select(r => r with
            {
                OutputFile = options.OutputDirectory is null || r.OutputFile is null ? null : Path.Combine(options.OutputDirectory, Path.GetFileName(r.OutputFile)),
            }).ToList(),
        };
    }

    private static void Check(IReadOnlyList<JobSimulationOptions> jobs, IReadOnlyList<JobSimulationInput> inputs)
    {
        ArgumentNullException.ThrowIfNull(jobs);
        ArgumentNullException.ThrowIfNull(inputs);
        if (jobs.Count == 0 || inputs.Count != jobs.Count)
        {
            throw new ArgumentException($"{jobs.Count} jobs and {inputs.Count} inputs: one input per job, at least one job");
        }
        var torus = jobs[0].Torus;
        for (int k = 0; k < jobs.Count; k++)
        {
            var job = jobs[k];
            job.Validate();
            if (!job.Torus.Equals(torus))
            {
                throw new ArgumentException("jobs that run at once run on the same cube");
            }
            if (job.Failures.Count > 0)
            {
                throw new ArgumentException("failures are injected into one job at a time");
            }
            if (inputs[k].ReduceTasks != job.ReduceTasks || inputs[k].ServerCount != torus.Count)
            {
                throw new ArgumentException($"job {k}'s input was written for R = {inputs[k].ReduceTasks} on {inputs[k].ServerCount} servers");
            }
        }
        if (jobs.Select(j => j.JobId).Distinct().Count() != jobs.Count)
        {
            throw new ArgumentException("jobs that run at once need distinct job ids");
        }
    }
}
