using System.Globalization;
using Camdoop.MapReduce.DirectShuffle.Plans;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

public static partial class FigureSweep
{
    public static IReadOnlyList<SweepRow> Run(Figure figure, Torus torus, SweepOptions? options = null, IProgress<SweepProgress>? progress = null)
    {
        ArgumentNullException.ThrowIfNull(torus);
        using var sweep = new SweepRun(figure, torus, options ?? new SweepOptions(), progress);
        return sweep.Execute();
    }

    /// <summary>Runs that share one input (every mode of one S and R), in the order the sweep takes them.</summary>
    private static List<SweepGroup> Groups(Figure figure, int servers, SweepOptions options)
    {
        var groups = new List<SweepGroup>();
        if (figure == Figure.Figure6)
        {
            // The paper's panels are R = 1 and R = N; a cube too large for R = N in memory can take others.
            var rs = options.ReduceTasks ?? [1, servers];
            foreach (double s in options.OutputRatios ?? DefaultOutputRatios)
            {
                foreach (int r in rs)
                {
                    groups.Add(new SweepGroup(s, r, string.Create(CultureInfo.InvariantCulture, $"R={r}"), options.Settings.BytesPerServer));
                }
            }
        }
        else if (figure == Figure.Figure10)
        {
            // The paper's small inputs: S = 0 (every map task's output is the size of the final result) and R = 1.
            foreach (long bytes in options.InputSizes ?? DefaultSmallInputs)
            {
                groups.Add(new SweepGroup(0, 1, "S=0, R=1", bytes));
            }
        }
        else
        {
            var rs = options.ReduceTasks ?? DefaultReduceTasks(servers);
            foreach (double s in new[] { 1.0, 0.0 })
            {
                foreach (int r in rs)
                {
                    groups.Add(new SweepGroup(s, r, s == 0 ? "S=0" : "S=1", options.Settings.BytesPerServer));
                }
            }
        }
        return groups;
    }

    private readonly record struct SweepGroup(double S, int R, string Panel, long Bytes)
    {
        /// <summary>Whether two groups run on the same generated input (it depends on S and the size only).</summary>
        public bool SharesRawInput(SweepGroup other) => S == other.S && Bytes == other.Bytes;
    }

    /// <summary>
    /// One sweep in progress: the groups in turn, each group's input mapped once and its modes run side by side (as
    /// many as fit in memory), the raw input generated once per S, an R = N input split from the R = 1 one of its S
    /// rather than mapped again, and the next group's input made ahead when a run leaves its core idle.
    /// </summary>
    private sealed class SweepRun(Figure figure, Torus torus, SweepOptions options, IProgress<SweepProgress>? progress) : IDisposable
    {
        private readonly List<SweepGroup> _groups = Groups(figure, torus.Count, options);
        private readonly int _parallelism = options.Parallelism > 0 ? options.Parallelism : Environment.ProcessorCount;
        private readonly long _budget = (options.Settings.Service ?? new CamdoopServiceOptions()).MemoryBudgetBytes;
        private readonly List<SweepRow> _rows = [];
        private int _done;
        private byte[][]? _raw;
        private SweepGroup? _rawGroup;

        // The next group's input, when it was mapped while this group's last run was still going (RunGroup).
        private Task<JobSimulationInput>? _ahead;

        private int Total => _groups.Count * options.Runs.Count;

        public IReadOnlyList<SweepRow> Execute()
        {
            // The last group's input, kept until the next group's is made: it may be split from it.
            JobSimulationInput? previous = null;
            try
            {
                for (int g = 0; g < _groups.Count; g++)
                {
                    var input = InputFor(g, ref previous);
                    try
                    {
                        RunGroup(g, input);
                    }
                    catch
                    {
                        input.Dispose();
                        throw;
                    }
                    previous = input;
                }
            }
            finally
            {
                previous?.Dispose();
            }
            return _rows;
        }

        /// <summary>
        /// Whether group <paramref name="g"/>'s input is split from <paramref name="previous"/>, the input of the group
        /// before it: at the same S mapped for R = 1 (Figure 6 takes R = 1, then R = N, at each S; any other R is
        /// mapped from the raw input of its S).
        /// </summary>
        private bool SplitsFrom(int g, JobSimulationInput previous) =>
            g > 0 && _groups[g - 1].SharesRawInput(_groups[g]) && _groups[g - 1].R == 1 && _groups[g].R > 1
            && JobSimulationInput.CanSplit(GroupOptions(g), previous);

        /// <summary>A run failed while the next input was being mapped: let that finish and free it.</summary>
        public void Dispose()
        {
            if (_ahead is null)
            {
                return;
            }
            try
            {
                _ahead.GetAwaiter().GetResult().Dispose();
            }
            catch (Exception)
            {
                // The run's failure is the one to report.
            }
            _ahead = null;
        }

        private JobSimulationOptions GroupOptions(int g) => new()
        {
            Torus = torus,
            Workload = Workload.Synthetic,
            OutputRatio = _groups[g].S,
            // The group's input size; the figures compare times and do not check outputs.
            Settings = options.Settings with { BytesPerServer = _groups[g].Bytes, Verify = false },
            ReduceTasks = _groups[g].R,
        };

        /// <summary>
        /// Group <paramref name="g"/>'s map outputs: mapped ahead, or mapped now from the raw input of its S
        /// (generated once per S: inputs depend on S only), after freeing what the previous group left.
        /// </summary>
        private JobSimulationInput InputFor(int g, ref JobSimulationInput? previous)
        {
            if (_ahead is not null)
            {
                var mapped = _ahead.GetAwaiter().GetResult();
                _ahead = null;
                Drop(ref previous);
                FreeLastRuns();
                return mapped;
            }
            if (previous is not null && SplitsFrom(g, previous))
            {
                FreeLastRuns(); // the previous group's runs; its input stays for the split
                var split = JobSimulationInput.Split(GroupOptions(g), previous);
                Drop(ref previous);
                return split;
            }
            Drop(ref previous);
            if (_rawGroup is not { } rawGroup || !rawGroup.SharesRawInput(_groups[g]))
            {
                _raw = null; // let the previous S's inputs go before generating the next
            }
            // The previous group's runs, map outputs and, on a new S, inputs.
            FreeLastRuns();
            var groupOptions = GroupOptions(g);
            if (_raw is null)
            {
                _raw = JobSimulationInput.Generate(groupOptions);
                _rawGroup = _groups[g];
            }
            return JobSimulationInput.Prepare(groupOptions, rawInputs: _raw);
        }

        private static void Drop(ref JobSimulationInput? input)
        {
            input?.Dispose();
            input = null;
        }

        /// <summary>Runs every mode of group <paramref name="g"/> on <paramref name="input"/> and adds their rows in mode order.</summary>
        private void RunGroup(int g, JobSimulationInput input)
        {
            var (s, r, panel, bytes) = _groups[g];
            var modes = options.Runs;
            var groupOptions = GroupOptions(g);
            var results = new JobSimulationResult[modes.Count];
            int atOnce = Math.Min(_parallelism, RunsSideBySide(torus.Count, r, bytes, _budget));
            // Cores not taken by runs side by side go to each run's partitions.
            int threads = Math.Max(1, _parallelism / Math.Min(atOnce, modes.Count));
            // Runs side by side on one core each rarely end together (at S = 0 and R = 1, Camdoop's run takes a third
            // of the time of the run without aggregation): when the first ends, the core it leaves maps the next
            // group's input, if that shares this group's generated input (the same S); RunsThatFitInMemory already
            // counts an input mapped ahead. Each input is mapped the same either way, so the rows are too.
            bool mapAhead = atOnce > 1 && modes.Count > 1 && g + 1 < _groups.Count && _groups[g + 1].SharesRawInput(_groups[g]);
            var nextOptions = mapAhead ? GroupOptions(g + 1) : null;
            bool splitNext = mapAhead && SplitsFrom(g + 1, input);
            var nextRaw = _raw;
            int ended = 0;
            Parallel.For(0, modes.Count, new ParallelOptions { MaxDegreeOfParallelism = atOnce }, m =>
            {
                var (mode, network, aggregation) = modes[m];
                if (atOnce == 1 && m > 0)
                {
                    FreeLastRuns(); // runs one at a time: the last one's
                }
                var runOptions = groupOptions with { Mode = mode, Network = network, SimulationThreads = threads };
                if (network is not null)
                {
                    runOptions = runOptions with { Tcp = options.Tcp, TcpSendBufferBytes = options.TcpSendBufferBytes, Direct = options.Direct, Aggregation = aggregation };
                }
                results[m] = JobSimulation.Run(runOptions, input);
                // The first run to end that leaves its core with no run of this group to take up.
                if (nextOptions is not null && Interlocked.Increment(ref ended) == Math.Max(1, modes.Count - atOnce + 1))
                {
                    _ahead = splitNext
                        ? Task.Run(() => JobSimulationInput.Split(nextOptions, input))
                        : Task.Run(() => JobSimulationInput.Prepare(nextOptions, rawInputs: nextRaw));
                }
                int now = Interlocked.Increment(ref _done);
                progress?.Report(new SweepProgress(now, Total, string.Create(CultureInfo.InvariantCulture,
                    $"{figure} {panel}{(figure == Figure.Figure10 ? $" {bytes / 1024.0:0.#} KB" : "")} S={s:0.##} R={r} {SeriesName(mode.Name(), network?.Label ?? "torus", aggregation.Name())}: {results[m].ShuffleReduceSeconds:0.####} s")));
            });
            foreach (var res in results)
            {
                _rows.Add(new SweepRow(figure.ToString(), panel, bytes, s, res.OutputRatio, r, res.Mode, res.Trees, res.ShuffleReduceSeconds, res.LowerBounds,
                    res.IntermediateBytes, res.OutputBytes, res.DataByteHops, res.LinkBytes, res.AggregatedBytes, res.Completed,
                    res.SimulationWallSeconds, res.SimulationCpuSeconds, res.Events, res.Network, res.Energy, res.Aggregation, res.CoreLinkBytes));
            }
        }
    }
}
