using Camdoop.Cli.CommandLine;
using Camdoop.MapReduce.DirectShuffle.Plans;

namespace Camdoop.Cli.Commands;

/// <summary>--aggregation (sim run, sim sweep): how TCP Camdoop's servers aggregate among themselves on the way to the reducer.</summary>
public static class AggregationFlag
{
    public const string Help = "With --mode tcp: direct (every stream straight to its reducer) | rack (one server per rack merges its rack's " +
        "streams, then one stream crosses the core) | binary (a binary tree of servers, racks first) | chain (a chain of every server), " +
        "merging and combining on the way";

    public static Command AddAggregationOption(this Command command, bool list = false)
    {
        ArgumentNullException.ThrowIfNull(command);
        return command.Option("aggregation", list ? Help + "; comma-separated, one run per entry" : Help, list ? "LIST" : "HOW", "direct");
    }

    /// <summary>The aggregations --aggregation names (one, or a list); given without TCP Camdoop it is one usage line.</summary>
    public static IReadOnlyList<Aggregation> Parse(ParsedArguments args, bool usesTcp, bool list = false)
    {
        ArgumentNullException.ThrowIfNull(args);
        if (!usesTcp && args.Strings("aggregation").Count > 0)
        {
            throw CliException.Usage($"{args.CommandPath}: --aggregation shapes TCP Camdoop's streams: it needs --mode tcp on a switched network");
        }
        var names = args.Required("aggregation").Split(',', StringSplitOptions.TrimEntries);
        if (!list && names.Length > 1)
        {
            throw CliException.Usage($"{args.CommandPath}: --aggregation takes one of direct, rack, binary, chain");
        }
        var aggregations = new List<Aggregation>();
        foreach (string name in names)
        {
            if (!AggregationNames.TryParse(name, out var aggregation))
            {
                throw CliException.Usage($"{args.CommandPath}: --aggregation '{name}' is not one of direct, rack, binary, chain");
            }
            aggregations.Add(aggregation);
        }
        return aggregations.Distinct().ToList();
    }
}
