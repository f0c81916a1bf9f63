using Camdoop.Cli.CommandLine;
using Camdoop.Experiments;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop sim ping`: per-hop round-trip times over the simulated torus (the Camdoop paper, §3: 0.13 ms per hop).</summary>
public static class SimPingCommand
{
    public static Command Create() =>
        new Command("ping", "Ping every server of a simulated torus from one server; report RTT per hop and hop counts.")
        {
            Details = "The paper measured 0.13 ms per hop on its prototype; --forwarding-latency 64us reproduces that.",
        }
            .Option("torus", "Torus size", "XxYxZ", "8x8x8")
            .Option("from", "Source server", "X,Y,Z", "0,0,0")
            .Option("targets", "Servers to ping, drawn at random (0 = all)", "N", "0")
            .Option("repeats", "Pings per target", "N", "1")
            .Option("forwarding-latency", "Per-hop forwarding latency (simulator default 10us)", "DURATION")
            .Option("link-rate-gbps", "Link rate in Gbit/s", "RATE", "1")
            .Option("seed", "Random seed", "N", "1")
            .Flag("json", "Print the result as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        var torus = CommonOptions.Torus(args);
        if (!Coordinate.TryParse(args.Required("from"), out var from) || !torus.Contains(from))
        {
            throw CliException.Usage($"--from must be a server of the {torus} torus, like 0,0,0");
        }
        var options = new PingExperimentOptions
        {
            Torus = torus,
            Source = from,
            Targets = args.Int("targets", 0, torus.Count - 1),
            Repeats = args.Int("repeats", 1, 1000),
            Seed = (ulong)args.Long("seed", 0),
            ForwardingLatency = args.Has("forwarding-latency") ? args.Nanoseconds("forwarding-latency") : null,
            LinkRateBitsPerSecond = (long)(args.Double("link-rate-gbps", 0.001, 400) * 1e9),
        };
        var result = PingExperiment.Run(options);
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new
            {
                torus = torus.ToString(),
                source = from.ToString(),
                sent = result.Sent,
                replied = result.Replied,
                lost = result.Lost,
                hopMismatches = result.HopMismatches,
                meanRttPerHopMs = result.MeanRttPerHopMs,
                fitSlopeMsPerHop = result.Fit.SlopeMsPerHop,
                fitInterceptMs = result.Fit.InterceptMs,
                byDistance = result.ByDistance,
            });
        }
        else
        {
            Console.Out.WriteLine(result.ToString());
        }
        return result.Lost == 0 && result.HopMismatches == 0 ? 0 : 1;
    }
}
