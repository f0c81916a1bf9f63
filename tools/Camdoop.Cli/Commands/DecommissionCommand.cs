using System.Diagnostics;
using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>
/// `camdoop decommission X,Y,Z` and `camdoop recommission X,Y,Z`: set servers aside so that their replicas move to
/// the others (waiting, with progress, until they may be switched off), or take them back.
/// </summary>
public static class DecommissionCommand
{
    private static readonly TimeSpan Poll = TimeSpan.FromSeconds(2);

    public static Command Create() =>
        new Command("decommission", "Set servers aside: their replicas are copied to the others; waits until switching them off loses nothing.")
            .Argument("servers", "The servers, x,y,z;x,y,z;... (quote the semicolons)")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("status", "Only report how far draining has gone (change nothing)")
            .Flag("no-wait", "Return once every server has been told, without waiting until it is safe")
            .Option("timeout", "Give up waiting after this long (exit 1)", "DURATION", "3600s")
            .Flag("json", "Print the last report as JSON")
            .Handle(args => Run(args, recommission: false));

    public static Command CreateRecommission() =>
        new Command("recommission", "Take decommissioned servers back: they receive their share of the replicas again.")
            .Argument("servers", "The servers, x,y,z;x,y,z;... (quote the semicolons)")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("json", "Print the result as JSON")
            .Handle(args => Run(args, recommission: true));

    private static int Run(ParsedArguments args, bool recommission)
    {
        var servers = args.Argument("servers")!.Split(';', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries).ToList();
        bool statusOnly = !recommission && args.Flag("status");
        long timeout = recommission ? 0 : args.Nanoseconds("timeout");
        using var client = FrontEndAddress.Connect(args);
        var reply = FrontEndAddress.Call(() => client.Call(new DecommissionRequest { Servers = servers, Recommission = recommission, StatusOnly = statusOnly }));
        string names = string.Join(' ', servers);
        if (reply.Unanswered.Count > 0)
        {
            Console.Error.WriteLine($"warning: no answer from {string.Join(' ', reply.Unanswered)}; run the command again once they are reachable");
        }
        if (recommission)
        {
            Write(args, reply, $"recommissioned {names}: they receive their share again; decommissioned now: {Set(reply)}");
            return 0;
        }
        var clock = Stopwatch.StartNew();
        while (!reply.Safe && !statusOnly && !args.Flag("no-wait") && clock.Elapsed.TotalSeconds * 1e9 < timeout)
        {
            Console.Error.WriteLine(Progress(reply, names));
            Thread.Sleep(Poll);
            reply = FrontEndAddress.Call(() => client.Call(new DecommissionRequest { Servers = servers, StatusOnly = true }));
        }
        Write(args, reply, reply.Safe
            ? $"{names}: safe to switch off: every replica they hold is held three times elsewhere"
            : Progress(reply, names));
        return reply.Safe || args.Flag("no-wait") || statusOnly ? 0 : 1;
    }

    private static string Progress(DecommissionReply reply, string names)
    {
        string silent = reply.DrainUnanswered.Count > 0 ? $"; no answer from {string.Join(' ', reply.DrainUnanswered)}" : "";
        return string.Create(CultureInfo.InvariantCulture,
            $"draining {names}: {reply.NotYetElsewhere} of {Units.Count(reply.ReplicasHeld, "replica")} they hold not yet three times elsewhere{silent}");
    }

    private static string Set(DecommissionReply reply) => reply.Decommissioned.Count == 0 ? "none" : string.Join(' ', reply.Decommissioned);

    private static void Write(ParsedArguments args, DecommissionReply reply, string text)
    {
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new
            {
                decommissioned = reply.Decommissioned,
                replicasHeld = reply.ReplicasHeld,
                notYetElsewhere = reply.NotYetElsewhere,
                safe = reply.Safe,
                unanswered = reply.Unanswered,
                drainUnanswered = reply.DrainUnanswered,
            });
            return;
        }
        Console.Out.WriteLine(text);
    }
}
