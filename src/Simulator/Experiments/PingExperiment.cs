using Camdoop.KeyRouting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;
using Camdoop.Server;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

/// <summary>
/// The paper's ping measurement (§3) on a simulated torus: every server runs a real server's services (idle but for ping);
/// one server pings the others one at a time (so no ping queues behind another) and the result gives the mean RTT
/// per torus distance and the RTT per hop.
/// </summary>
public static class PingExperiment
{
    private const long Ms = SimTime.Millisecond;

    public static PingExperimentResult Run(PingExperimentOptions options)
    {
        ArgumentNullException.ThrowIfNull(options);
        options.Validate();
        var torus = options.Torus;
        var defaults = new SimulationOptions { Torus = torus, Seed = options.Seed };
        var simOptions = defaults with
        {
            ForwardingLatency = options.ForwardingLatency ?? defaults.ForwardingLatency,
            PropagationDelay = options.PropagationDelay ?? defaults.PropagationDelay,
            LinkRateBitsPerSecond = options.LinkRateBitsPerSecond ?? defaults.LinkRateBitsPerSecond,
        };
        using var sim = new Simulation(simOptions, host => ServerStack.OnTorus(host));
        sim.Start();

        var targets = PickTargets(torus, options, sim.Random);
        var samples = new List<PingSample>(targets.Count * options.Repeats);
        var ping = sim.Host(options.Source).GetService<PingService>()!;
        int next = 0;
        int total = targets.Count * options.Repeats;
        bool done = total == 0;

        void SendNext()
        {
            while (next < total)
            {
                var target = targets[next % targets.Count];
                next++;
                int distance = torus.Distance(options.Source, target);
                var status = ping.Ping(target, r =>
                {
                    samples.Add(new PingSample(target, distance, r.ForwardHops, r.ReturnHops, r.Outcome == PingOutcome.Replied ? r.RoundTripNs : -1));
                    SendNext();
                }, options.Timeout);
                if (status == SendStatus.Queued)
                {
                    return;
                }
                samples.Add(new PingSample(target, distance, -1, -1, -1));
            }
            done = true;
        }

        // Start after the first beacons are out of the way.
        long start = sim.Now + Ms;
        sim.Schedule(start, SendNext);
        sim.RunUntil(() => done, start + ((long)(total + 1) * (options.Timeout + Ms)));

        var rows = samples
            .Where(s => s.Replied)
            .GroupBy(s => s.Distance)
            .OrderBy(g => g.Key)
            .Select(g => new PingDistanceRow(g.Key, g.Count(), g.Average(s => s.RoundTripNs) / 1e6, g.Min(s => s.RoundTripNs) / 1e6, g.Max(s => s.RoundTripNs) / 1e6))
            .ToList();
        return new PingExperimentResult(torus, options.Source, samples, rows, sim.Now - start, sim.WallTime, sim.EventsProcessed);
    }

    private static List<Coordinate> PickTargets(Torus torus, PingExperimentOptions options, Xoshiro256StarStar random)
    {
        var all = torus.All().Where(c => c != options.Source).ToList();
        if (options.Targets == 0 || options.Targets >= all.Count)
        {
            return all;
        }
        // A seeded partial Fisher-Yates shuffle, then in torus order for a readable run.
        for (int i = 0; i < options.Targets; i++)
        {
            int j = i + (int)(random.NextUInt64() % (ulong)(all.Count - i));
            (all[i], all[j]) = (all[j], all[i]);
        }
        return [.. all.Take(options.Targets).OrderBy(torus.IndexOf)];
    }
}
