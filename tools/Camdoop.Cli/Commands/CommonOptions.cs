using Camdoop.Cli.CommandLine;
using Camdoop.Experiments;
using Camdoop.FrontEnd.Wire;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Energy;

namespace Camdoop.Cli.Commands;

/// <summary>Options shared by several commands.</summary>
public static class CommonOptions
{
    public static Torus Torus(ParsedArguments args, string option = "torus") =>
        Runtime.Topology.Torus.TryParse(args.Required(option), out var torus, out var error)
            ? torus!
            : throw CliException.Usage($"--{option}: {error}");

    /// <summary>A dataset name as the front-ends accept it (<see cref="Names"/>), checked before connecting; else a usage error.</summary>
    public static string DatasetName(ParsedArguments args, string name, string what = "dataset name") =>
        Names.DatasetProblem(name) is { } problem
            ? throw CliException.Usage($"{args.CommandPath}: {Names.Quote(name)} is not a valid {what}: {problem}")
            : name;

    public const string TreesHelp = "shallow (search-improved, 7.7 hops on 8x8x8) | paper (the paper's trees, 10.8 hops)";

    public const string MaxWindowHelp = "Largest receive window per shuffle stream (noagg at low S is sensitive to it; Camdoop is not)";

    public const string ComputeHelp = "off (work is free, as in the paper) | paper (the paper's rates: reduce path 3.15 Gbit/s) | calibrated (rates measured here by camdoop calibrate)";

    public const string ComputeRatesHelp = "With --compute calibrated: the rates file (default ~/.camdoop/compute-rates.json)";

    private static readonly IReadOnlyDictionary<string, ComputeMode> ComputeModes = new Dictionary<string, ComputeMode>(StringComparer.Ordinal)
    {
        ["off"] = ComputeMode.Off,
        ["paper"] = ComputeMode.Paper,
        ["calibrated"] = ComputeMode.Calibrated,
    };

    public const string FrameCostHelp = "With --compute paper or calibrated: what each received frame costs its server's core, whatever its length (a user-space stack's per-packet work), e.g. 10us";

    /// <summary>How a simulation prices work (--compute, --compute-rates, --frame-cost); null for off. A bad rates file is one line, exit 1.</summary>
    public static ComputeModel? Compute(ParsedArguments args)
    {
        var mode = args.Choice("compute", ComputeModes);
        string? rates = args.String("compute-rates");
        if (rates is not null && mode != ComputeMode.Calibrated)
        {
            throw CliException.Usage($"{args.CommandPath}: --compute-rates needs --compute calibrated");
        }
        long frameNs = 0;
        if (args.Has("frame-cost"))
        {
            if (mode == ComputeMode.Off)
            {
                throw CliException.Usage($"{args.CommandPath}: --frame-cost needs --compute paper or --compute calibrated");
            }
            frameNs = args.Nanoseconds("frame-cost");
        }
        try
        {
            var model = ComputeModel.For(mode, rates);
            return model is null || frameNs == 0 ? model : model with { Rates = model.Rates with { FrameNanoseconds = frameNs } };
        }
        catch (Exception ex) when (ex is IOException or InvalidDataException or UnauthorizedAccessException)
        {
            // "camdoop: sim run: ...", as every other error that is not a usage error.
            string command = args.CommandPath.StartsWith("camdoop ", StringComparison.Ordinal) ? args.CommandPath["camdoop ".Length..] : args.CommandPath;
            throw new CliException($"{command}: {ex.Message}");
        }
    }

    public const string EnergyHelp = "Account every port's energy (E-EON's EEE model): " + EnergyModel.Syntax;

    /// <summary>The energy model of --energy (null without it); a bad one is one usage line, exit 2.</summary>
    public static EnergyModel? Energy(ParsedArguments args)
    {
        string? text = args.String("energy");
        if (text is null)
        {
            return null;
        }
        try
        {
            return EnergyModel.Parse(text);
        }
        catch (FormatException ex)
        {
            throw CliException.Usage($"{args.CommandPath}: --energy {ex.Message}");
        }
    }

    /// <summary>The Camdoop service settings of a simulation: the defaults with --max-window.</summary>
    public static CamdoopServiceOptions ServiceOptions(ParsedArguments args)
    {
        var defaults = new CamdoopServiceOptions();
        long window = args.Bytes("max-window");
        if (window < defaults.Shuffle.MinWindowBytes || window > 64L * 1024 * 1024)
        {
            throw CliException.Usage($"{args.CommandPath}: --max-window must be between {defaults.Shuffle.MinWindowBytes} bytes (two segments) and 64MB, not {window}");
        }
        return defaults with { Shuffle = defaults.Shuffle with { MaxWindowBytes = (int)window } };
    }
}
