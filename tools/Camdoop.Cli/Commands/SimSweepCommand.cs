using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Experiments;
using Camdoop.MapReduce.Trees;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop sim sweep`: reproduces the paper's Figures 6 and 7 in simulation, as CSV plus one SVG chart per panel.</summary>
public static class SimSweepCommand
{
    private static readonly Dictionary<string, Figure> Figures = new(StringComparer.Ordinal)
    {
        ["6"] = Figure.Figure6,
        ["7"] = Figure.Figure7,
    };

    public static Command Create() =>
        new Command("sweep", "Reproduce paper Figure 6 (vary S at R=1 and R=N) or Figure 7 (vary R at S=0 and S=1): CSV and SVG charts.")
        {
            Details = "Runs Camdoop and Camdoop (no agg.) on the synthetic job at every point, next to the three switch lower\n" +
                      "bounds, one simulation per core at a time. '--figure 6 --torus 3x3x3' is the testbed-sized counterpart\n" +
                      "of Figure 5; '--figure 6 --reducers 1,100' draws Figure 6's panels at other R, for cubes whose R=N run\n" +
                      "does not fit in memory. Map output stays in memory here (map costs no simulated time either way).",
        }
            .Option("figure", "6 or 7", "N", "6")
            .Option("torus", "Torus size", "XxYxZ", "8x8x8")
            .Option("input-per-server", "Generated input per server", "SIZE", "2MB")
            .Option("output-ratios", "Figure 6: S values, comma-separated", "LIST", "0,0.2,0.4,0.6,0.8,1")
            .Option("reducers", "R values, comma-separated: Figure 7's points (default 1,2,4,...,N), Figure 6's panels (default 1,N)", "LIST")
            .Option("parallel", "Cores to use (runs side by side as memory allows, each on its share); 0 = all", "N", "0")
            .Option("seed", "Random seed", "N", "1")
            .Option("max-window", CommonOptions.MaxWindowHelp, "SIZE", "128KB")
            .Option("trees", CommonOptions.TreesHelp, "FAMILY", "shallow")
            .Option("out", "Directory for the CSV and SVG files (default sweeps/figure<N>-<torus>)", "DIR")
            .Flag("force", "Run even when the largest run's estimated memory exceeds what this machine has available")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        var figure = args.Choice("figure", Figures);
        var torus = CommonOptions.Torus(args);
        var options = new SweepOptions
        {
            BytesPerServer = args.Bytes("input-per-server"),
            Seed = (ulong)args.Long("seed", 0),
            OutputRatios = ParseList(args, "output-ratios", s => double.Parse(s, NumberStyles.Float, CultureInfo.InvariantCulture), v => v is >= 0 and <= 1),
            ReduceTasks = args.Has("reducers") ? ParseList(args, "reducers", s => int.Parse(s, NumberStyles.Integer, CultureInfo.InvariantCulture), r => r >= 1 && r <= torus.Count).Distinct().ToList() : null,
            Parallelism = args.Int("parallel", 0, 64),
            Service = CommonOptions.ServiceOptions(args),
            Trees = args.Choice("trees", TreeFamilyNames.All),
        };
        if (!args.Flag("force"))
        {
            // The largest R is the heaviest run; the generated inputs of its S stay beside it (one per server).
            int largest = (options.ReduceTasks ?? (figure == Figure.Figure6 ? [torus.Count] : FigureSweep.DefaultReduceTasks(torus.Count))).Max();
            MemoryCheck.Require("sim sweep", torus.ToString(), torus.Count, largest, options.BytesPerServer, mapOutputOnDisk: false,
                options.Service, torus.Count * options.BytesPerServer, MemoryCheck.Available, "lower --input-per-server or the largest R");
        }
        string number = figure == Figure.Figure6 ? "6" : "7";
        string outDir = args.String("out") ?? Path.Combine("sweeps", $"figure{number}-{torus}");
        Directory.CreateDirectory(outDir);

        IReadOnlyList<SweepRow> rows;
        var wall = System.Diagnostics.Stopwatch.StartNew();
        using (var bar = new ProgressBar($"figure {number}"))
        {
            try
            {
                rows = FigureSweep.Run(figure, torus, options, new Progress<SweepProgress>(p => bar.Report((double)p.Done / p.Total, $"{p.Done}/{p.Total} {p.Current}")));
            }
            catch (ArgumentException ex)
            {
                throw new CliException($"sim sweep: {ex.Message}");
            }
        }
        string csv = Path.Combine(outDir, $"figure{number}.csv");
        FigureSweep.WriteCsv(rows, csv);
        var charts = FigureSweep.WriteCharts(rows, outDir);

        Console.Out.WriteLine($"Figure {number} on {torus} ({torus.Count} servers, {Units.Bytes(options.BytesPerServer)} per server, {options.Trees.Name()} trees), {rows.Count} runs in {wall.Elapsed.TotalSeconds:0.#} s");
        Console.Out.WriteLine($"machine: {HostMachine.Current}");
        Console.Out.WriteLine($"{"panel",-8} {"S",6} {"R",5} {"mode",-18} {"time",12} {"switch 1G",12} {"switch 6G",12} {"1G 1:4",12}");
        foreach (var r in rows)
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{r.Panel,-8} {r.OutputRatio,6:0.###} {r.ReduceTasks,5} {FigureSweep.ModeName(r.Mode == "camdoop" ? MapReduce.Jobs.Control.ShuffleMode.Camdoop : MapReduce.Jobs.Control.ShuffleMode.NoAgg),-18} {Units.Seconds(r.ShuffleReduceSeconds),12} {Units.Seconds(r.LowerBounds.Switch1G),12} {Units.Seconds(r.LowerBounds.Switch6G),12} {Units.Seconds(r.LowerBounds.Switch1GOversubscribed),12}"));
        }
        Console.Out.WriteLine($"wrote {csv}");
        foreach (var chart in charts)
        {
            Console.Out.WriteLine($"wrote {chart}");
        }
        return rows.All(r => r.Completed) ? 0 : 1;
    }

    private static IReadOnlyList<T> ParseList<T>(ParsedArguments args, string option, Func<string, T> parse, Func<T, bool> valid)
    {
        var text = args.Required(option);
        var values = new List<T>();
        foreach (var part in text.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            T value;
            try
            {
                value = parse(part);
            }
            catch (FormatException)
            {
                throw CliException.Usage($"sim sweep: --{option} has a bad value '{part}'");
            }
            if (!valid(value))
            {
                throw CliException.Usage($"sim sweep: --{option} value '{part}' is out of range");
            }
            values.Add(value);
        }
        return values.Count > 0 ? values : throw CliException.Usage($"sim sweep: --{option} is empty");
    }
}
