using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Experiments;
using Camdoop.Simulator.Network;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop sim sweep --figure netagg`: the NetAgg paper's workload under rack, binary, chain and NetAgg, and its metric.</summary>
internal static class SimNetAggSweep
{
    private static readonly string[] NotForThisSweep =
        ["input-per-server", "reducers", "networks", "aggregation", "output-ratios", "input-sizes", "fractions", "jobs", "energy", "compute", "trees", "parallel"];

    public static int Run(ParsedArguments args)
    {
        var torus = CommonOptions.Torus(args);
        if (NotForThisSweep.FirstOrDefault(args.Given) is { } other)
        {
            throw CliException.Usage($"sim sweep: --{other} is not for --figure netagg (its flows, requests and designs come from the workload)");
        }
        var network = SwitchedNetworkFlags.Network(args, NetworkKind.Racks)!;
        var (tcp, sendBuffer, direct) = SwitchedNetworkFlags.Tcp(args, usesTcp: true);
        var options = new NetAggWorkloadSweepOptions
        {
            Workload = new NetAggWorkloadOptions
            {
                Torus = torus,
                EdgeLoad = args.Double("edge-load", 0, 1),
                AggregatableShare = args.Double("aggregatable", 0, 1),
                OutputRatio = args.Double("alpha", 0, 1),
                Seed = (ulong)args.Long("seed", 0),
            },
            Trials = args.Int("trials", 1, 1000),
            Verify = args.Flag("verify"),
            Racks = network,
            Tcp = tcp,
            TcpSendBufferBytes = sendBuffer,
            Direct = direct,
        };
        try
        {
            options.Workload.Validate();
        }
        catch (ArgumentException ex)
        {
            throw CliException.Usage($"sim sweep: {ex.Message}");
        }
        string outDir = args.String("out") ?? Path.Combine("sweeps", $"netagg-fct-{torus}");
        string cube = $"{torus.Count} servers, racks of {network.RackSize}, 1:{network.Oversubscription}";
        if (args.Flag("chart-only"))
        {
            string csv = Path.Combine(outDir, "netagg-fct.csv");
            if (!File.Exists(csv))
            {
                throw new CliException($"sim sweep: --chart-only: no {csv} (give --out the directory the sweep wrote)");
            }
            IReadOnlyList<FlowCompletion> saved;
            try
            {
                saved = NetAggWorkloadSweep.ReadCsv(csv);
            }
            catch (Exception ex) when (ex is FormatException or IndexOutOfRangeException)
            {
                throw new CliException($"sim sweep: --chart-only: {csv} is not a netagg sweep's CSV ({ex.Message})");
            }
            Console.Out.WriteLine($"wrote {string.Join(", ", NetAggWorkloadSweep.Write(outDir, saved, NetAggWorkloadSweep.Summarize(saved), cube))}");
            return 0;
        }
        var wall = System.Diagnostics.Stopwatch.StartNew();
        IReadOnlyList<FlowCompletion> rows;
        var counters = new List<WorkloadRun>();
        int runs = options.Trials * options.Designs.Count, done = 0;
        using (var bar = new ProgressBar("netagg workload"))
        {
            try
            {
                rows = NetAggWorkloadSweep.Run(options, new Progress<string>(status => bar.Report((double)done++ / runs, status)), counters);
            }
            catch (Exception ex) when (ex is ArgumentException or InvalidOperationException)
            {
                throw new CliException($"sim sweep: {ex.Message}");
            }
        }
        var summaries = NetAggWorkloadSweep.Summarize(rows);
        var written = NetAggWorkloadSweep.Write(outDir, rows, summaries, cube, counters);

        var w = options.Workload;
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"NetAgg workload on {torus.Count} servers (racks of {network.RackSize}, 1:{network.Oversubscription}): {w.EdgeLoad:P0} of the servers send a flow, {w.AggregatableShare:P0} of the flows aggregatable at α = {w.OutputRatio:0.##}, {options.Trials} trials, {wall.Elapsed.TotalSeconds:0.#} s"));
        Console.Out.WriteLine($"machine: {HostMachine.Current}");
        Console.Out.WriteLine($"{"design",-8} {"flows",6} {"median FCT",11} {"99th FCT",11} {"/ rack",7} {"aggregatable",13} {"background",11} {"timeouts",8} {"drops",8} {"verified",8}");
        foreach (var s in summaries)
        {
            var mine = rows.Where(r => r.Design == s.Design).ToList();
            string verified = mine.All(r => r.Verified is null) ? "-" : mine.All(r => r.Verified == true) ? "yes" : "NO";
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{s.Design,-8} {s.Flows,6} {Units.Seconds(s.MedianSeconds),11} {Units.Seconds(s.P99Seconds),11} {(s.P99OverRack is { } r ? r.ToString("0.00", CultureInfo.InvariantCulture) : "-"),7} {Units.Seconds(s.AggregatableP99Seconds),13} {Units.Seconds(s.BackgroundP99Seconds),11} {counters.Where(c => c.Design == s.Design).Sum(c => c.Timeouts),8} {counters.Where(c => c.Design == s.Design).Sum(c => c.SwitchDrops),8} {verified,8}"));
        }
        Console.Out.WriteLine("the NetAgg paper (1,024 servers, 1:4, α = 10 %), 99th-percentile FCT / rack's: " +
            string.Join(", ", NetAggWorkloadSweep.PaperOverRack.Select(p => string.Create(CultureInfo.InvariantCulture, $"{p.Key} {p.Value:0.00}"))));
        Console.Out.WriteLine($"wrote {string.Join(", ", written)}");
        return rows.All(r => r.Verified != false) ? 0 : 1;
    }
}
