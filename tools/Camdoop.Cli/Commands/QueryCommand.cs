using System.Globalization;
using System.Text.Json;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;
using Camdoop.Monitoring.Queries;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop query "..."`: a monitoring query over the whole cube, its result every interval (docs/monitoring.md).</summary>
public static class QueryCommand
{
    public static Command Create() =>
        new Command("query", "Ask the whole cube a monitoring query and print its result every interval, merged over a tree to the front-end's server.")
        {
            Details = "QUERY is select COLUMNS from TABLE [where CONDITION] [group by COLUMNS] [top K by COLUMN] every INTERVAL,\n" +
                      "over the tables links, services, jobs, servers, storage and metrics (docs/monitoring.md lists their columns).\n" +
                      "Without --once or --rounds it runs until interrupted. With --once or --rounds N the every clause may\n" +
                      "be left out: the rounds are then " + QueryParser.DefaultInterval + " apart.",
        }
            .Argument("query", "The query, in quotes")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Option("rounds", "Stop after this many rounds (0: until interrupted)", "N", "0")
            .Flag("once", "One round, then exit (as --rounds 1)")
            .Flag("json", "Print each round as one line of JSON")
            .Handle(Run);

    private static readonly JsonSerializerOptions OneLine = new(JsonOutput.Options) { WriteIndented = false };

    private static int Run(ParsedArguments args)
    {
        string text = args.Argument("query")!;
        int rounds = args.Flag("once") ? 1 : args.Int("rounds", 0, 1_000_000);
        Query query;
        try
        {
            // A fixed number of rounds needs no interval of its own. Checked here too, so that a bad query is
            // refused before connecting.
            if (rounds > 0)
            {
                text = QueryParser.WithDefaultInterval(text);
            }
            query = QueryParser.Parse(text);
        }
        catch (QueryException e)
        {
            string hint = rounds == 0 && e.Message.Contains("expected 'every'", StringComparison.Ordinal)
                ? " (with --once or --rounds N it may be left out)" : "";
            throw CliException.Usage($"query: {e.Message}{hint}");
        }
        bool json = args.Flag("json");
        using var client = FrontEndAddress.Connect(args);
        // Parts come every interval; a silent front-end for much longer than that is gone.
        client.ReplyTimeout = TimeSpan.FromMinutes(1) + TimeSpan.FromTicks(3 * query.IntervalNs / 100);
        bool incomplete = false;
        FrontEndAddress.Call(() => client.Call(
            new QueryRequest { Query = text, Rounds = rounds },
            part =>
            {
                incomplete |= part.Servers < part.ServersInCube;
                if (json)
                {
                    Console.Out.WriteLine(JsonSerializer.Serialize(new
                    {
                        round = part.Round,
                        servers = part.Servers,
                        serversInCube = part.ServersInCube,
                        latencyNs = part.LatencyNs,
                        columns = part.Columns,
                        rows = part.Rows,
                    }, OneLine));
                    Console.Out.Flush();
                    return;
                }
                Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"round {part.Round}: {part.Servers}/{part.ServersInCube} servers, {part.LatencyNs / 1e6:0.###} ms to merge"));
                Console.Out.Write(TextTable.Format(part.Columns, part.Rows));
                Console.Out.Flush();
            }));
        return incomplete && rounds > 0 ? 1 : 0;
    }
}
