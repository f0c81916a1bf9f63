using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop ping X,Y,Z`: round-trip times over the torus from the front-end's server (the Camdoop paper, §3: 0.13 ms per hop).</summary>
public static class PingCommand
{
    public static Command Create() =>
        new Command("ping", "Ping a server of the cube from the front-end's server over the torus links; RTT per hop.")
            .Argument("server", "Target server X,Y,Z")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Option("count", "Echoes to send", "N", "5")
            .Option("interval", "Time between echoes", "DURATION", "100ms")
            .Flag("json", "Print the result as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string target = args.Argument("server")!;
        int count = args.Int("count", 1, 10_000);
        long intervalMs = args.Nanoseconds("interval") / 1_000_000;
        bool json = args.Flag("json");
        using var client = FrontEndAddress.Connect(args);
        var rtts = new List<double>();
        var perHop = new List<double>();
        long distance = 0;
        var final = FrontEndAddress.Call(() => client.Call(
            new PingRequest { Target = target, Count = count, IntervalMs = intervalMs },
            part =>
            {
                distance = part.Distance;
                if (part.RttNs is { } rttNs)
                {
                    double ms = rttNs / 1e6;
                    long hops = (part.ForwardHops ?? 0) + (part.ReturnHops ?? 0);
                    rtts.Add(ms);
                    if (hops > 0)
                    {
                        perHop.Add(ms * 2 / hops);
                    }
                    if (!json)
                    {
                        string hopText = hops > 0 ? string.Create(CultureInfo.InvariantCulture, $" ({ms * 2 / hops:0.###} ms per hop)") : "";
                        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                            $"reply from {target}: seq={part.Seq} hops={part.ForwardHops}/{part.ReturnHops} rtt={ms:0.###} ms{hopText}"));
                    }
                }
                else if (!json)
                {
                    Console.Out.WriteLine($"no reply from {target}: seq={part.Seq} {part.Lost}");
                }
            }));
        long replied = final.Replied;
        if (json)
        {
            JsonOutput.Write(Console.Out, new
            {
                source = final.Source,
                target = final.Target,
                distance,
                sent = count,
                replied,
                rttMs = rtts,
                meanRttMs = rtts.Count > 0 ? rtts.Average() : (double?)null,
                meanRttPerHopMs = perHop.Count > 0 ? perHop.Average() : (double?)null,
            });
        }
        else
        {
            string rttText = rtts.Count > 0 ? string.Create(CultureInfo.InvariantCulture, $"; rtt min/avg/max {rtts.Min():0.###}/{rtts.Average():0.###}/{rtts.Max():0.###} ms") : "";
            string hopText = perHop.Count > 0 ? string.Create(CultureInfo.InvariantCulture, $"; {perHop.Average():0.###} ms per hop") : "";
            Console.Out.WriteLine($"{final.Source} -> {final.Target} ({distance} hops): {count} sent, {replied} replied{rttText}{hopText}");
        }
        return replied == count ? 0 : 1;
    }
}
