using System.Diagnostics;
using Camdoop.Experiments.Baselines;
using Camdoop.Experiments.NetAgg;
using Camdoop.MapReduce.DirectShuffle;
using Camdoop.MapReduce.DirectShuffle.Plans;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Service;
using Camdoop.Runtime.Transport.Tcp;
using Camdoop.Simulator.Network;

namespace Camdoop.Experiments;

public static partial class JobSimulation
{
    /// <summary>
    /// TCP Camdoop (<see cref="ShuffleMode.Tcp"/>): the same map outputs, every server's output for each reduce task
    /// sent straight to the reducer's server over the simulated TCP through the switched network, merged and
    /// reduced there as it arrives; or, with an <see cref="JobSimulationOptions.Aggregation"/>, up trees of servers that
    /// merge and combine on the way. Servers run only TCP and the stream shuffle; the report keeps the switch bounds
    /// over the same intermediate data beside the simulated time.
    /// </summary>
    private static JobSimulationResult RunDirect(JobSimulationOptions options, JobSimulationInput input, IProgress<JobSimulationProgress>? progress)
    {
        var wall = Stopwatch.StartNew();
        var torus = options.Torus;
        int n = torus.Count;
        var description = Describe(options);
        var network = options.Network!;
        // NetAgg's boxes are hosts after the servers, in extra x-planes of the hosts' torus.
        var boxes = network.Kind == NetworkKind.NetAgg ? NetAggLayout.For(network, n) : null;
        var hosts = boxes?.HostTorus(torus) ?? torus;
        var simOptions = SimulationOptionsFor(options) with { Network = network, Torus = hosts, Servers = torus };
        var transports = new TcpStreamTransport[hosts.Count];
        var services = new DirectShuffleService[hosts.Count];
        using var sim = new Simulation(simOptions, host =>
        {
            int s = hosts.IndexOf(host.Self);
            transports[s] = TcpStreamTransport.Install(host, options.Tcp, options.TcpSendBufferBytes);
            services[s] = new DirectShuffleService(host, transports[s], options.Direct, torus);
        });
        options.Configure?.Invoke(sim);
        var maps = input.MapOutputs;
        var cpu = SimulationCpu.Start(sim);
        var completions = new List<ReduceTaskResult>();
        var failures = new List<string>();
        sim.Start();
        foreach (var service in services)
        {
            service.ReduceTaskCompleted += c =>
            {
                lock (completions)
                {
                    completions.Add(c);
                }
            };
            service.JobFailed += j =>
            {
                lock (failures)
                {
                    failures.Add($"{service.Context.Self}: {j.Failure}");
                }
            };
        }
        long t0 = sim.Now;
        var mapTasks = new SimulatedMapTasks(torus, input, options.MapServers);
        var roots = JobPlacement.For(torus, description).RootIndices;
        IAggregationPlan plan = boxes is not null
            ? new NetAggPlan(boxes, roots, options.AggregationTrees)
            : options.Aggregation.Plan(n, RackSizeOf(network, n), roots, options.AggregationTrees);
        int nodes = n + (boxes?.Boxes ?? 0); // hosts past the boxes have no cable and no part in the job
        sim.Schedule(t0, () => sim.ForEachServer(s =>
        {
            if (s < nodes)
            {
                services[s].StartJob(description, input.Job, s < n && mapTasks.Maps(s) ? [maps[s]] : [], plan);
            }
        }));
        var detected = FailBoxes(options, sim, services, description.JobId, plan, nodes, t0);
        bool completed = RunShuffle(sim, options, completions, failures, progress, t0);
        double cpuSeconds = cpu.Seconds(sim);
        var result = CollectDirect(options, description, sim, services, transports, input, completions, failures, completed, t0) with
        {
            Failures = [.. options.Failures.Select(f => new FailureReport(f.What, f.Server.Name, null, f.AtNanoseconds / 1e9,
                detected.TryGetValue(f.What, out long d) ? (d - t0) / 1e9 : null))],
            Recovery = options.Failures.Count == 0 ? null : new RecoveryReport(services.Sum(s => s.GetJob(description.JobId)?.ResentBytes ?? 0),
                0, 0, 0, 0, 0, null, null),
            // The same accounting as the torus's runs: the network's ports from time 0 to the last reducer's end.
            Energy = options.Energy is null ? null : sim.MeasureEnergy(JobEnd(sim, completions)),
        };
        return Finish(result, options, input, completions, completed, cpuSeconds, wall);
    }

    /// <summary>
    /// Crashes the agg boxes of <see cref="JobSimulationOptions.Failures"/> at their times. The job's hosts learn of
    /// a crash one liveness detection later (the node's beacon interval times its missed beacons, as the torus's
    /// servers detect a neighbour): then they go on with the trees without the box. Returns when each was detected.
    /// </summary>
    private static Dictionary<string, long> FailBoxes(JobSimulationOptions options, Simulation sim, DirectShuffleService[] services,
        ulong jobId, IAggregationPlan plan, int nodes, long t0)
    {
        var detected = new Dictionary<string, long>();
        if (options.Failures.Count == 0)
        {
            return detected;
        }
        var node = sim.Options.Node;
        long detection = node.BeaconInterval * node.BeaconMisses;
        var trees = (NetAggPlan)plan;
        foreach (var failure in options.Failures.OrderBy(f => f.AtNanoseconds))
        {
            int box = sim.Torus.IndexOf(failure.Server);
            long at = t0 + failure.AtNanoseconds;
            sim.FailServer(failure.Server, at);
            trees = trees.Without(box);
            var without = trees;
            detected[failure.What] = at + detection;
            sim.Schedule(at + detection, () => sim.ForEachServer(s =>
            {
                if (s < nodes && !sim.IsServerFailed(sim.Torus.CoordinateOf(s)))
                {
                    services[s].OnApplianceFailed(jobId, box, without, without.Nodes);
                }
            }));
        }
        return detected;
    }

    /// <summary>
    /// Consecutive servers that share a switch, the racks of <see cref="Aggregation.Rack"/>: a rack, the servers
    /// under one edge switch of a fat tree, or every server on a single switch (one rack: the direct shuffle).
    /// </summary>
    private static int RackSizeOf(SwitchedNetworkOptions network, int servers)
    {
        switch (network.Kind)
        {
            case NetworkKind.Racks or NetworkKind.Grin:
                return network.RackSize; // GRIN's cables change no rack: its switches are the racks network's
            case NetworkKind.FatTree:
                {
                    int k = network.FatTreeK;
                    while (k == 0 || (long)k * k * k / 4 < (long)servers * network.NicsPerServer)
                    {
                        k += 2; // the fabric's smallest k that holds every NIC, when none is given
                    }
                    return Math.Max(1, k / 2 / network.NicsPerServer);
                }
            default:
                return servers;
        }
    }

    private static JobSimulationResult CollectDirect(JobSimulationOptions options, JobDescription description, Simulation sim,
        DirectShuffleService[] services, TcpStreamTransport[] transports, JobSimulationInput input, List<ReduceTaskResult> completions,
        List<string> failures, bool completed, long t0)
    {
        var torus = options.Torus;
        int n = torus.Count;
        var demand = new ShuffleDemand(n, [.. JobPlacement.For(torus, description).RootIndices]);
        long intermediate = 0, intermediateEncoded = 0;
        for (int s = 0; s < n; s++)
        {
            var stats = input.MapOutputs[s].Stats;
            intermediate += stats.IntermediateLogicalBytes;
            intermediateEncoded += stats.IntermediateEncodedBytes;
            for (int r = 0; r < description.ReduceTasks; r++)
            {
                demand.Add(s, r, stats.EncodedBytesPerReduceTask[r]);
            }
        }
        var bounds = SwitchLowerBounds.Compute(demand);
        var tcp = new TcpSenderTotals();
        foreach (var transport in transports)
        {
            tcp = tcp.Add(transport.SenderTotals);
        }
        var jobs = services.Select(s => s.GetJob(description.JobId)).ToList();
        // The servers' aggregation; an agg box's is in its own report.
        var reduced = jobs.Take(n).Select(j => (j?.ReducedBytes ?? 0) + (j?.MergedBytes ?? 0)).ToList();
        var boxes = sim.AggBoxes;
        var boxReports = boxes is null ? null : Enumerable.Range(n, boxes.Boxes).Select(b => new AggBoxReport(
            boxes.NameOf(b), sim.Torus.CoordinateOf(b).ToString(), jobs[b]?.MergedBytes ?? 0, jobs[b]?.ForwardedBytes ?? 0,
            sim.ComputeBusy(b) / 1e9, sim.IsServerFailed(sim.Torus.CoordinateOf(b)))).ToList();
        var links = sim.LinkTotals;
        long busiestBytes = 0, busiestTime = 0, coreBytes = 0;
        int hosts = sim.Torus.Count;
        foreach (var link in sim.Links)
        {
            busiestBytes = Math.Max(busiestBytes, link.Bytes);
            busiestTime = Math.Max(busiestTime, link.BusyTime);
            if (link.FromIndex >= hosts && link.ToIndex >= hosts)
            {
                coreBytes += link.Bytes; // switch to switch
            }
        }
        long last = completions.Count == 0 ? sim.Now : completions.Max(c => c.CompletedAt);
        long output = completions.Sum(c => c.LogicalBytes);
        var network = options.Network!;
        var direct = options.Direct ?? new DirectShuffleOptions();
        return new JobSimulationResult
        {
            Torus = torus.ToString(),
            Servers = n,
            Job = description.Job.ToString(),
            Workload = options.Workload.ToString().ToLowerInvariant(),
            Mode = description.Mode.Name(),
            ReduceTasks = description.ReduceTasks,
            Network = network.Label,
            Aggregation = boxes is not null ? "netagg" : options.Aggregation.Name(),
            AggBoxes = boxReports,
            Trees = "none",
            Completed = completed,
            InputBytes = input.InputBytes,
            IntermediateBytes = intermediate,
            IntermediateEncodedBytes = intermediateEncoded,
            OutputBytes = output,
            OutputRecords = completions.Sum(c => c.Records),
            OutputRatio = intermediate == 0 ? 0 : (double)output / intermediate,
            ShuffleReduceSeconds = (last - t0) / 1e9,
            LowerBounds = new LowerBounds(bounds.Switch1G, bounds.Switch6G, bounds.Switch1GOversubscribed),
            LinkBytes = links.Bytes,
            CoreLinkBytes = coreBytes,
            MergedBytes = jobs.Sum(j => j?.MergedBytes ?? 0),
            ForwardedBytes = jobs.Sum(j => j?.ForwardedBytes ?? 0),
            LinkFrames = links.Frames,
            BusiestLinkBytes = busiestBytes,
            BusiestLinkBusySeconds = busiestTime / 1e9,
            // Hops through switches are not counted per byte: the links' own counters say where bytes went.
            DataByteHops = 0,
            DataBytesSent = tcp.PayloadBytesSent,
            DataFrames = tcp.SegmentsSent,
            AckFrames = transports.Sum(t => t.Tcp.AcksSent),
            RetransmittedBytes = tcp.PayloadBytesResent,
            Timeouts = tcp.Timeouts,
            FramesDropped = links.Drops,
            AggregatedBytes = Distribution.Of(reduced),
            ShuffleBufferPeakBytes = Distribution.Of([]),
            Reducers = Outcomes(completions, t0),
            Errors = failures,
            WallSeconds = 0,
            MapWallSeconds = 0,
            SimulationWallSeconds = sim.WallTime.TotalSeconds,
            Events = sim.EventsProcessed,
            FrameEvents = sim.FrameEventsProcessed,
            SimulationCpuSeconds = 0,
            Compute = options.Compute is null ? null : ComputeReport.Of(options.Compute, sim, [input.MapOutputs], t0, last),
            Tcp = new TcpRunReport
            {
                CongestionControl = options.Tcp.Dctcp ? "dctcp" : "newreno",
                MinRtoSeconds = options.Tcp.MinRto / 1e9,
                PortBufferBytes = network.PortBufferBytes,
                EcnThresholdBytes = network.EcnThresholdBytes,
                ReceiveWindowBytes = options.Tcp.ReceiveWindowBytes,
                PacingBitsPerSecond = options.Tcp.PacingBitsPerSecond,
                SendBufferBytes = options.TcpSendBufferBytes,
                ConcurrentStreams = direct.ConcurrentStreams,
                NicsPerServer = network.NicsPerServer,
                Connections = tcp.Connections,
                SegmentsSent = tcp.SegmentsSent,
                SegmentsResent = tcp.SegmentsResent,
                FastRetransmits = tcp.FastRetransmits,
                SwitchDrops = sim.Switches.Sum(s => s.BufferDrops),
                EcnMarks = sim.Switches.Sum(s => s.EcnMarks),
                PeakQueueBytes = sim.Switches.Count == 0 ? 0 : sim.Switches.Max(s => (long)s.PeakQueueBytes),
            },
        };
    }
}
