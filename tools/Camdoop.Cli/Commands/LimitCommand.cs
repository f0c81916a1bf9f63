using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;
using Camdoop.Monitoring.Control;
using Camdoop.Monitoring.Queries;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop limit`: sets, lifts and lists rate limits on services and jobs (docs/monitoring.md, rate limits).</summary>
public static class LimitCommand
{
    public static Command Create() =>
        new Command("limit", "Set, lift or list rate limits: a service's frames or a job's data frames, per port, enforced by every server's round robin.")
        {
            Details = "RATE is a number and a unit of bits per second: bit, kbit, mbit, gbit (50mbit = 50,000,000 bit/s).\n" +
                      "A service limit caps the service's frames (its own and those it forwards) on each chosen port of\n" +
                      "each chosen server; while it waits for tokens the other services use the link. A job limit caps the\n" +
                      "job's shuffle data frames the same way; the other jobs take the turns it cannot use.\n" +
                      "With --when QUERY --above X the limit is set only once a round of the monitoring query has a number\n" +
                      "above X in its last column (the query runs until then, or for --rounds rounds).\n" +
                      "Examples:\n" +
                      "  camdoop limit --service chunk-store --rate 200mbit --servers 0,0,0 --port +X\n" +
                      "  camdoop limit --job 4f1c0a9e00000001 --rate 50mbit\n" +
                      "  camdoop limit --job 4f1c0a9e00000001 --rate 50mbit --when \"select max(busy_ns) from links every 1s\" --above 500000000\n" +
                      "  camdoop limit --clear --service chunk-store\n" +
                      "  camdoop limit --list",
        }
            .Option("service", "The service to limit, by name (camdoop, chunk-store, ...) or id", "SERVICE")
            .Option("job", "The job to limit (its id, 16 hex digits)", "JOBID")
            .Option("rate", "The limit on each port", "RATE")
            .Option("servers", "all, or the servers to limit: X,Y,Z;X,Y,Z;...", "SERVERS", "all")
            .Option("port", "Limit only these ports, repeatable or comma-separated: +X,-X,+Y,-Y,+Z,-Z; without it, all six", "PORT")
            .Flag("clear", "Lift the limit of --service or --job (on --servers and --port)")
            .Flag("list", "List the limits in force on the cube")
            .Option("when", "Set the limit only once a round of this monitoring query triggers --above", "QUERY")
            .Option("above", "With --when: the threshold on the largest value of the query's last column", "X")
            .Option("rounds", "With --when: give up after this many rounds (0: until triggered or interrupted)", "N", "0")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("json", "Print the result as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        bool list = args.Flag("list");
        bool clear = args.Flag("clear");
        string? service = args.String("service");
        string? job = args.String("job");
        if (list)
        {
            if (service is not null || job is not null || clear || args.Has("rate") || args.Has("when"))
            {
                throw CliException.Usage("limit: --list takes no --service, --job, --rate, --clear or --when");
            }
            return List(args);
        }
        if ((service is null) == (job is null))
        {
            throw CliException.Usage("limit: give one of --service SERVICE, --job JOBID or --list");
        }
        if (job is not null && (job.Length is 0 or > 16 || !ulong.TryParse(job, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out _)))
        {
            throw CliException.Usage($"limit: --job '{job}' is not a job id (16 hex digits)");
        }
        long rate = 0;
        if (clear)
        {
            if (args.Has("rate"))
            {
                throw CliException.Usage("limit: --clear lifts a limit; leave out --rate");
            }
        }
        else if (!RateText.TryParse(args.String("rate") ?? throw CliException.Usage("limit: give --rate RATE (e.g. 50mbit), or --clear"), out rate))
        {
            throw CliException.Usage($"limit: --rate '{args.String("rate")}' is not a rate: give a number and bit, kbit, mbit or gbit (e.g. 50mbit)");
        }
        var request = new LimitRequest
        {
            Service = service,
            JobId = job,
            BytesPerSecond = rate,
            Ports = Ports(args),
            Servers = Servers(args.Required("servers")),
        };
        LimitPolicy? policy = null;
        string? when = args.String("when");
        if (when is not null || args.Has("above"))
        {
            policy = Policy(args, when);
        }
        int rounds = args.Int("rounds", 0, 1_000_000);
        if (policy is not null && !Watch(args, when!, policy, rounds))
        {
            return 0;
        }
        using var client = FrontEndAddress.Connect(args);
        var reply = FrontEndAddress.Call(() => client.Call(request));
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new
            {
                kind = reply.Kind,
                target = reply.Target,
                bytesPerSecond = reply.BytesPerSecond,
                ports = reply.Ports,
                servers = reply.Servers,
                confirmed = reply.Confirmed,
                expected = reply.Expected,
            });
        }
        else
        {
            string what = reply.BytesPerSecond == 0 ? "lifted" : $"set to {RateText.Format(reply.BytesPerSecond)}";
            string where = reply.Kind == "service"
                ? $"{reply.Confirmed} of {reply.Expected} queues ({reply.Servers} servers x {reply.Ports.Count} ports) confirm it"
                : $"{reply.Confirmed} of the {reply.Expected} servers running the job confirm it";
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{reply.Kind} {reply.Target}: limit {what} on {string.Join(" ", reply.Ports)}; {where}"));
        }
        // A service limit every queue did not confirm (a server unreachable, a round too late) is worth a non-zero exit.
        return reply.Kind == "service" && reply.Confirmed < reply.Expected ? 1 : 0;
    }

    private static LimitPolicy Policy(ParsedArguments args, string? when)
    {
        if (when is null || !args.Has("above"))
        {
            throw CliException.Usage("limit: --when QUERY and --above X go together");
        }
        try
        {
            QueryParser.Parse(when);
        }
        catch (QueryException e)
        {
            throw CliException.Usage($"limit: --when: {e.Message}");
        }
        string above = args.Required("above");
        return double.TryParse(above, NumberStyles.Float, CultureInfo.InvariantCulture, out double threshold) && double.IsFinite(threshold)
            ? new LimitPolicy(threshold)
            : throw CliException.Usage($"limit: --above '{above}' is not a number");
    }

    /// <summary>Runs the policy's query until a round triggers it (true) or its rounds run out (false).</summary>
    private static bool Watch(ParsedArguments args, string query, LimitPolicy policy, int rounds)
    {
        using var client = FrontEndAddress.Connect(args);
        client.ReplyTimeout = TimeSpan.FromMinutes(1) + TimeSpan.FromTicks(3 * QueryParser.Parse(query).IntervalNs / 100);
        try
        {
            FrontEndAddress.Call(() => client.Call(new QueryRequest { Query = query, Rounds = rounds }, part =>
            {
                bool fires = policy.Triggers(part, out double value);
                Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"limit: round {part.Round}: {(double.IsNaN(value) ? "no value" : value.ToString("G6", CultureInfo.InvariantCulture))}{(fires ? $" > {policy.Above}: setting the limit" : $" (threshold {policy.Above})")}"));
                if (fires)
                {
                    throw new Triggered();
                }
            }));
        }
        catch (Triggered)
        {
            return true;
        }
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"limit: not triggered in {rounds} rounds; no limit set"));
        return false;
    }

    private static int List(ParsedArguments args)
    {
        using var client = FrontEndAddress.Connect(args);
        var reply = FrontEndAddress.Call(() => client.Call(new LimitsRequest()));
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new
            {
                servers = reply.Servers,
                serversInCube = reply.ServersInCube,
                limits = reply.Limits.Select(l => new { kind = l.Kind, target = l.Target, bytesPerSecond = l.BytesPerSecond, servers = l.Servers, queues = l.Queues }),
            });
            return 0;
        }
        if (reply.Limits.Count == 0)
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"no rate limits ({reply.Servers}/{reply.ServersInCube} servers answered)"));
            return 0;
        }
        Console.Out.Write(TextTable.Format(
            ["kind", "target", "rate", "servers", "queues"],
            [.. reply.Limits.Select(l => (IReadOnlyList<string>)[l.Kind, l.Target, RateText.Format(l.BytesPerSecond),
                l.Servers.ToString(CultureInfo.InvariantCulture), l.Queues.ToString(CultureInfo.InvariantCulture)])]));
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"{reply.Servers}/{reply.ServersInCube} servers answered"));
        return 0;
    }

    private static List<string>? Ports(ParsedArguments args)
    {
        var ports = args.Strings("port").SelectMany(p => p.Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries)).ToList();
        foreach (var p in ports)
        {
            if (!Runtime.Topology.Ports.TryParse(p, out _))
            {
                throw CliException.Usage($"limit: --port '{p}' is not a port: give +X, -X, +Y, -Y, +Z or -Z");
            }
        }
        return ports.Count == 0 ? null : ports;
    }

    /// <summary>"all" (null: every server), or servers X,Y,Z separated by ';' or spaces.</summary>
    internal static List<string>? Servers(string text)
    {
        if (string.Equals(text.Trim(), "all", StringComparison.OrdinalIgnoreCase))
        {
            return null;
        }
        var servers = text.Split([';', ' '], StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).ToList();
        if (servers.Count == 0)
        {
            throw CliException.Usage("limit: --servers is empty: give all, or X,Y,Z;X,Y,Z;...");
        }
        foreach (var s in servers)
        {
            if (!Runtime.Topology.Coordinate.TryParse(s, out _))
            {
                throw CliException.Usage($"limit: --servers: '{s}' is not a server: give X,Y,Z (e.g. 1,0,2), several separated by ';'");
            }
        }
        return servers;
    }

    /// <summary>Stops the policy's query: the round that triggered it is the last one needed.</summary>
    private sealed class Triggered : Exception;
}
