using System.Globalization;
using Camdoop.Experiments;
using Camdoop.Experiments.Traffic;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.Runtime.Topology;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Energy;
using Camdoop.Simulator.Events;
using Camdoop.Simulator.Network;

namespace Camdoop.Benchmarks.Simulator;

/// <summary>
/// The network energy of one job's shuffle on the torus and behind one switch, under each energy model. On the torus
/// the job runs as Camdoop (R = 1, output checked against the reference). Behind the switch every server sends the
/// encoded intermediate bytes its map produced for the reducer straight to the reducer's server over TCP, as TCP
/// Camdoop's shuffle would (no aggregation on the way). Prints CSV.
/// Usage: <c>shuffle-energy [torus, default 3x3x3] [wordcount|sort, default sort] [KB per server, default 500]
/// [models, default legacy,eee,ideal,eee:12us10,eee:120us100] [TCP minimum RTO in ms, default 200; the initial RTO is five
/// times it]</c>
/// </summary>
public static class ShuffleEnergyBenchmark
{
    public static int Run(string[] args, TextWriter output)
    {
        var torus = Torus.Parse(args.Length > 0 ? args[0] : "3x3x3");
        var workload = (args.Length > 1 ? args[1] : "sort") == "wordcount" ? Workload.WordCount : Workload.Sort;
        long bytes = (long)(double.Parse(args.Length > 2 ? args[2] : "500", CultureInfo.InvariantCulture) * 1000);
        var models = (args.Length > 3 ? args[3] : "legacy,eee,ideal,eee:12us10,eee:120us100").Split(',').Select(EnergyModel.Parse).ToList();
        long minRto = (long)(double.Parse(args.Length > 4 ? args[4] : "200", CultureInfo.InvariantCulture) * SimTime.Millisecond);
        var job = new JobSimulationOptions
        {
            Torus = torus,
            Workload = workload,
            Settings = new SimulationSettings { BytesPerServer = bytes, Verify = true },
            ReduceTasks = 1,
            Mode = ShuffleMode.Camdoop,
            SimulationThreads = 1,
        };
        output.WriteLine("network,job,model,seconds,joules,torus_joules,nic_joules,switch_joules,legacy_joules,low_power_share,wakes,correct,cpu_s");
        int reducer = -1;
        foreach (var model in models)
        {
            var r = JobSimulation.Run(job with { Settings = job.Settings with { Energy = model } });
            if (Coordinate.TryParse(r.Reducers[0].Server, out var root))
            {
                reducer = torus.IndexOf(root);
            }
            Row(output, "torus", workload, r.Energy!, r.Verified == true, r.SimulationCpuSeconds);
        }

        // The same job's map outputs: what each server holds for the one reducer.
        using var input = JobSimulationInput.Prepare(job);
        var flows = Enumerable.Range(0, torus.Count)
            .Where(s => s != reducer)
            .Select(s => new TcpFlow(s, reducer, input.MapOutputs[s].Stats.EncodedBytesPerReduceTask[0]))
            .ToList();
        foreach (var model in models)
        {
            using var traffic = new TcpTraffic(new TcpTrafficOptions
            {
                Torus = torus,
                Network = new SwitchedNetworkOptions { Kind = NetworkKind.Switch },
                Tcp = new TcpOptions { MinRto = minRto, InitialRto = 5 * minRto },
                Flows = flows,
                Energy = model,
            });
            var r = traffic.Run();
            Row(output, string.Create(CultureInfo.InvariantCulture, $"switch (min RTO {SimTime.Format(minRto)})"), workload, traffic.Simulation.MeasureEnergy(r.Duration), r.AllDone && r.CorruptBytes == 0, r.CpuSeconds);
        }
        return 0;
    }

    private static void Row(TextWriter output, string network, Workload workload, NetworkEnergy e, bool correct, double cpu)
    {
        output.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{network},{workload.ToString().ToLowerInvariant()},{e.Model},{e.Seconds:F6},{e.Joules:F6},{e.ByKind.TorusLinks:F6},{e.ByKind.ServerNics:F6},{e.ByKind.SwitchPorts:F6},{e.LegacyJoules:F6},{e.LowPowerShare:F4},{e.Wakes},{correct},{cpu:F2}"));
        output.Flush();
    }
}
