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
    /// What a stream shuffle's run measured (<see cref="ShuffleMode.Tcp"/>, on a switched network): sizes, the switch
    /// bounds over the same intermediate data, the links' and TCP's counters, the agg boxes' work.
    /// </summary>
    internal static JobSimulationResult CollectDirect(JobSimulationOptions options, JobDescription submitted, SimulatedCube cube, JobSimulationInput input,
        List<ReduceTaskResult> completions, List<string> failures, bool completed, long t0)
    {
        var sim = cube.Sim;
        // The attempt that ran last (a lost server makes a tcp-mode job start over with its own shuffle id).
        ulong shuffleId = completions.Count > 0 ? completions[0].JobId : submitted.JobId;
        var description = submitted with { JobId = shuffleId };
        var services = Enumerable.Range(0, sim.Torus.Count).Select(h => cube.Stack(h)?.Direct).ToList();
        var transports = services.Select(s => (s?.Transport as TcpStreamTransport)?.Tcp).ToList();
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
        foreach (var service in services)
        {
            if (service?.Transport is TcpStreamTransport transport)
            {
                tcp = tcp.Add(transport.SenderTotals);
            }
        }
        var jobs = Enumerable.Range(0, services.Count).Select(h => cube.DirectJobOf(h, description.JobId)).ToList();
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
        var direct = SimulatedCube.AssumingNetwork(options.Direct ?? new DirectShuffleOptions(), network, options.Tcp);
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
            AckFrames = transports.Sum(t => t?.AcksSent ?? 0),
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
            EventTraceHash = TraceHash(sim),
            SimulationCpuSeconds = 0,
            Compute = options.Settings.Compute is null ? null : ComputeReport.Of(options.Settings.Compute, sim, [input.MapOutputs], t0, last),
            Recovery = options.Failures.Count == 0 ? null : new RecoveryReport(jobs.Sum(j => j?.ResentBytes ?? 0), 0, 0, 0, 0, 0, null, null),
            // The same accounting as the torus's runs: the network's ports from time 0 to the last reducer's end.
            Energy = options.Settings.Energy is null ? null : sim.MeasureEnergy(last),
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
                ParallelFetches = direct.Push ? 0 : direct.AdmissionBound,
                NicsPerServer = network.NicsPerServer,
                Connections = tcp.Connections,
                SegmentsSent = tcp.SegmentsSent,
                SegmentsResent = tcp.SegmentsResent,
                FastRetransmits = tcp.FastRetransmits,
                SwitchDrops = sim.Switches.Sum(s => s.BufferDrops),
                AcksDeferred = transports.Sum(t => t?.AcksDeferred ?? 0),
                EcnMarks = sim.Switches.Sum(s => s.EcnMarks),
                PeakQueueBytes = sim.Switches.Count == 0 ? 0 : sim.Switches.Max(s => (long)s.PeakQueueBytes),
            },
        };
    }
}
