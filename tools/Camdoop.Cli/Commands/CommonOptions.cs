using Camdoop.Cli.CommandLine;
using Camdoop.FrontEnd.Wire;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Topology;

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
