using Camdoop.Cli.CommandLine;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Commands;

/// <summary>Options shared by several commands.</summary>
public static class CommonOptions
{
    public static Torus Torus(ParsedArguments args, string option = "torus") =>
        Runtime.Topology.Torus.TryParse(args.Required(option), out var torus, out var error)
            ? torus!
            : throw CliException.Usage($"--{option}: {error}");
}
