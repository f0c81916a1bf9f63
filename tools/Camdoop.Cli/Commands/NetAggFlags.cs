using Camdoop.Cli.CommandLine;
using Camdoop.Simulator.Network;

namespace Camdoop.Cli.Commands;

/// <summary>The flags of a NetAgg network (sim run): where the agg boxes are, their cables' rate, their processing rate, the trees.</summary>
public static class NetAggFlags
{
    private static readonly string[] Flags = ["agg-boxes", "agg-link-rate", "agg-rate", "agg-trees"];

    private static readonly IReadOnlyDictionary<string, AggBoxPlacement> Placements = new Dictionary<string, AggBoxPlacement>(StringComparer.Ordinal)
    {
        ["all"] = AggBoxPlacement.All,
        ["upper"] = AggBoxPlacement.Upper,
    };

    public static Command AddNetAggOptions(this Command command)
    {
        ArgumentNullException.ThrowIfNull(command);
        return command
            .Option("agg-boxes", "With --network netagg: all (a box on every switch) | upper (the core's only: the NetAgg paper's partial deployment)", "WHERE", "all")
            .Option("agg-link-rate", "With --network netagg: each agg box's cable to its switch, in Gbit/s", "GBPS", "10")
            .Option("agg-rate", "With --network netagg: each agg box's merge and combine rate, in Gbit/s", "GBPS", "9.2")
            .Option("agg-trees", "With --network netagg: aggregation trees per reduce task, each carrying a share of the keys (1-6)", "N", "1");
    }

    /// <summary>The network with its boxes set from the flags; rejects the flags on any other network.</summary>
    public static SwitchedNetworkOptions? Apply(ParsedArguments args, SwitchedNetworkOptions? network)
    {
        ArgumentNullException.ThrowIfNull(args);
        if (network?.Topology.HasAggBoxes != true)
        {
            foreach (string flag in Flags)
            {
                if (args.Strings(flag).Count > 0)
                {
                    throw CliException.Usage($"{args.CommandPath}: --{flag} needs --network netagg");
                }
            }
            return network;
        }
        var boxes = new AggBoxOptions
        {
            Placement = args.Choice("agg-boxes", Placements),
            LinkRateBitsPerSecond = (long)(args.Double("agg-link-rate", 0.001, 400) * 1e9),
            ProcessingBitsPerSecond = args.Double("agg-rate", 0.001, 400) * 1e9,
        };
        return network with { AggBoxes = boxes };
    }

    /// <summary>Trees per reduce task on a NetAgg network (1 elsewhere).</summary>
    public static int Trees(ParsedArguments args, NetworkKind kind)
    {
        ArgumentNullException.ThrowIfNull(args);
        return kind.Topology().HasAggBoxes ? args.Int("agg-trees", 1, 6) : 1;
    }
}
