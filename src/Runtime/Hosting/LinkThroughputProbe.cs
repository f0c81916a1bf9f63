using System.Diagnostics;
using System.Globalization;
using System.Text;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Hosting;

/// <summary>What <see cref="LinkThroughputProbe"/> measures.</summary>
public sealed record LinkProbeOptions
{
    /// <summary>Measured interval, after the warm-up.</summary>
    public TimeSpan Duration { get; init; } = TimeSpan.FromSeconds(3);

    public TimeSpan Warmup { get; init; } = TimeSpan.FromSeconds(1);

    /// <summary>Both nodes flood (each sends and receives); otherwise only A sends and B receives.</summary>
    public bool Bidirectional { get; init; } = true;

    /// <summary>Frames per second each flooding node offers; 0 floods as fast as the link takes them.</summary>
    public double FramesPerSecond { get; init; }

    /// <summary>Payload per frame; the default makes 9,014-byte frames.</summary>
    public int PayloadSize { get; init; } = FrameLayout.MaxPayload;

    public int Mtu { get; init; } = 9000;

    /// <summary>Frames each service may queue per port.</summary>
    public int QueueCapacity { get; init; } = 256;

    /// <summary>The links' tunables; <see cref="RawEthernetOptions.Driver"/> picks the driver both nodes use.</summary>
    public RawEthernetOptions Link { get; init; } = new();

    /// <summary>Where the nodes log (link up/down, errors); nothing when null.</summary>
    public TextWriter? Log { get; init; }
}

/// <summary>One node's side of a probe, over the measured interval.</summary>
public sealed record NodeLinkThroughput
{
    public required string Node { get; init; }
    public long FramesSent { get; init; }
    public long BytesSent { get; init; }

    /// <summary>Frames delivered to the flood service (through the whole runtime).</summary>
    public long FramesReceived { get; init; }

    public long BytesReceived { get; init; }
    public double Seconds { get; init; }

    /// <summary>CPU of the node's loop thread plus its link's I/O thread (including kernel work done on them).</summary>
    public double CpuSeconds { get; init; }

    public long KernelDrops { get; init; }
    public long SequenceGaps { get; init; }
    public long SendBlocked { get; init; }
    /// <summary>Frames per send batch: per sendmmsg (afpacket), per flush of the transmit ring (pcap).</summary>
    public double FramesPerSendCall { get; init; }

    /// <summary>Frames per receive batch: per recvmmsg (afpacket), per wake-up of the I/O thread (pcap).</summary>
    public double FramesPerReceiveCall { get; init; }
    public long LoopAllocatedBytes { get; init; }
    public long IoAllocatedBytes { get; init; }
    public long LoopSleeps { get; init; }

    /// <summary>Frame buffers the node's pool had to create (warm-up growth; zero in a steady state).</summary>
    public long FramesCreated { get; init; }

    public double SentFramesPerSecond => FramesSent / Seconds;
    public double ReceivedFramesPerSecond => FramesReceived / Seconds;
    public double SentGbps => BytesSent * 8 / Seconds / 1e9;
    public double ReceivedGbps => BytesReceived * 8 / Seconds / 1e9;

    /// <summary>Cores this node kept busy (CPU seconds per wall second).</summary>
    public double Cores => CpuSeconds / Seconds;
}

public sealed record LinkProbeResult
{
    public required LinkProbeOptions Options { get; init; }
    public required NodeLinkThroughput A { get; init; }
    public required NodeLinkThroughput B { get; init; }
    public double Seconds { get; init; }

    /// <summary>CPU of the whole process (both nodes, the kernel work on their threads, GC and the runtime).</summary>
    public double ProcessCpuSeconds { get; init; }

    public long AllocatedBytes { get; init; }
    public int Gen0Collections { get; init; }
    public int Gen1Collections { get; init; }
    public int Gen2Collections { get; init; }
    public int ProcessorCount { get; init; }

    /// <summary>/proc/loadavg when the measurement started: other work on the machine skews every number here.</summary>
    public string LoadAverage { get; init; } = "";

    public double ProcessCores => ProcessCpuSeconds / Seconds;

    public string Describe()
    {
        var sb = new StringBuilder();
        var c = CultureInfo.InvariantCulture;
        sb.AppendLine(c, $"link probe ({Options.Link.Driver.Name()}): {(Options.Bidirectional ? "both directions" : "A -> B")}, {(Options.FramesPerSecond > 0 ? $"offered {Options.FramesPerSecond:N0} frames/s per sender" : "unpaced")}, {FrameLayout.PayloadOffset(false) + Options.PayloadSize}-byte frames, MTU {Options.Mtu}, {Seconds:F2} s measured, {ProcessorCount} CPUs, load average {LoadAverage}");
        foreach (var n in new[] { A, B })
        {
            sb.AppendLine(c, $"  {n.Node}: sent {n.SentFramesPerSecond,9:N0} frames/s {n.SentGbps,6:F2} Gbit/s | received {n.ReceivedFramesPerSecond,9:N0} frames/s {n.ReceivedGbps,6:F2} Gbit/s | CPU {n.Cores * 100,5:F1}% of a core");
            sb.AppendLine(c, $"      kernel drops {n.KernelDrops}, sequence gaps {n.SequenceGaps}, send blocked {n.SendBlocked}x, {n.FramesPerSendCall:F1} frames per send batch, {n.FramesPerReceiveCall:F1} per receive batch, loop slept {n.LoopSleeps}x, allocated loop {n.LoopAllocatedBytes} B io {n.IoAllocatedBytes} B, pool grew {n.FramesCreated} frames");
        }
        long frames = A.FramesSent + B.FramesSent + A.FramesReceived + B.FramesReceived;
        sb.AppendLine(c, $"  process: CPU {ProcessCores * 100:F1}% of a core, allocated {AllocatedBytes} B ({(frames == 0 ? 0 : (double)AllocatedBytes / frames):F3} B per frame sent or received), GCs gen0 {Gen0Collections} gen1 {Gen1Collections} gen2 {Gen2Collections}");
        return sb.ToString();
    }
}

/// <summary>
/// Measures one link through the whole runtime: two nodes (event loop, host, raw-Ethernet link of the chosen driver) in two network
/// namespaces joined by an unshaped veth pair, flood services pushing maximum-size frames. Reports frames/s and
/// Gbit/s each node sends and receives, CPU per node (loop + I/O thread, from /proc) and for the process, and
/// allocations. Needs root. A Stopwatch harness: each node runs its own threads, which BenchmarkDotNet cannot drive.
/// </summary>
public static class LinkThroughputProbe
{
    private static readonly Torus Torus = new(3, 3, 3);
    private static readonly Coordinate NodeA = new(0, 0, 0);
    private static readonly Coordinate NodeB = new(1, 0, 0);

    public static LinkProbeResult Run(LinkProbeOptions? options = null)
    {
        options ??= new LinkProbeOptions();
        if (NetworkNamespace.WhyUnavailable() is { } why)
        {
            throw new RawEthernetException($"the link probe cannot run: {why}");
        }
        using var veth = VethLink.Create(options.Mtu);
        var log = options.Log is null ? NodeLog.Null : new NodeLog(TextWriter.Synchronized(options.Log));
        var nodeOptions = new NodeOptions { QueueCapacity = options.QueueCapacity };
        using var a = StartNode(veth.NamespaceA, veth.InterfaceA, NodeA, Port.XPlus, options, nodeOptions, log);
        using var b = StartNode(veth.NamespaceB, veth.InterfaceB, NodeB, Port.XMinus, options, nodeOptions, log);

        WaitFor(() => a.Loop.InvokeAsync(() => a.Loop.Host.IsLinkUp(Port.XPlus)).Result
            && b.Loop.InvokeAsync(() => b.Loop.Host.IsLinkUp(Port.XMinus)).Result, TimeSpan.FromSeconds(10), "the link to come up");
        a.Loop.InvokeAsync(() => a.Flood.SetFlooding(true, options.FramesPerSecond)).Wait();
        if (options.Bidirectional)
        {
            b.Loop.InvokeAsync(() => b.Flood.SetFlooding(true, options.FramesPerSecond)).Wait();
        }
        Thread.Sleep(options.Warmup);

        string load = ReadLoadAverage();
        var process = Process.GetCurrentProcess();
        int gen0 = GC.CollectionCount(0), gen1 = GC.CollectionCount(1), gen2 = GC.CollectionCount(2);
        long allocated = GC.GetTotalAllocatedBytes(precise: true);
        process.Refresh();
        var cpu0 = process.TotalProcessorTime;
        var a0 = a.Snapshot();
        var b0 = b.Snapshot();
        var clock = Stopwatch.StartNew();

        Thread.Sleep(options.Duration);

        var a1 = a.Snapshot();
        var b1 = b.Snapshot();
        double seconds = clock.Elapsed.TotalSeconds;
        process.Refresh();
        var cpu1 = process.TotalProcessorTime;
        var result = new LinkProbeResult
        {
            Options = options,
            A = Difference("A (0,0,0)", a0, a1, seconds),
            B = Difference("B (1,0,0)", b0, b1, seconds),
            Seconds = seconds,
            ProcessCpuSeconds = (cpu1 - cpu0).TotalSeconds,
            AllocatedBytes = GC.GetTotalAllocatedBytes(precise: true) - allocated,
            Gen0Collections = GC.CollectionCount(0) - gen0,
            Gen1Collections = GC.CollectionCount(1) - gen1,
            Gen2Collections = GC.CollectionCount(2) - gen2,
            ProcessorCount = Environment.ProcessorCount,
            LoadAverage = load,
        };
        a.Loop.InvokeAsync(() => a.Flood.SetFlooding(false)).Wait();
        b.Loop.InvokeAsync(() => b.Flood.SetFlooding(false)).Wait();
        return result;
    }

    private static ProbeNode StartNode(string netns, string interfaceName, Coordinate self, Port port, LinkProbeOptions options, NodeOptions nodeOptions, NodeLog log)
    {
        var pool = new FramePool(1024);
        var link = NetworkNamespace.Run(netns, () => RawEthernetLinks.Open(interfaceName, pool, options.Link));
        var loop = new NodeEventLoop(driver => new NodeHost(self, Torus, driver, pool, nodeOptions), log);
        var flood = new FloodService(port, options.PayloadSize);
        loop.Host.Register(flood);
        loop.AttachLink(port, link);
        loop.Start();
        return new ProbeNode(loop, link, flood);
    }

    private static string ReadLoadAverage()
    {
        try
        {
            return string.Join(' ', File.ReadAllText("/proc/loadavg").Split(' ').Take(3));
        }
        catch (IOException)
        {
            return "unknown";
        }
    }

    private static void WaitFor(Func<bool> condition, TimeSpan timeout, string what)
    {
        var clock = Stopwatch.StartNew();
        while (!condition())
        {
            if (clock.Elapsed > timeout)
            {
                throw new TimeoutException($"link probe: timed out waiting for {what}");
            }
            Thread.Sleep(10);
        }
    }

    private static NodeLinkThroughput Difference(string name, Sample s0, Sample s1, double seconds)
    {
        long sendCalls = s1.SendBatches - s0.SendBatches;
        long receiveCalls = s1.ReceiveBatches - s0.ReceiveBatches;
        return new NodeLinkThroughput
        {
            Node = name,
            Seconds = seconds,
            FramesSent = s1.FramesSent - s0.FramesSent,
            BytesSent = s1.BytesSent - s0.BytesSent,
            FramesReceived = s1.FramesDelivered - s0.FramesDelivered,
            BytesReceived = s1.BytesDelivered - s0.BytesDelivered,
            CpuSeconds = (s1.CpuNs - s0.CpuNs) / 1e9,
            KernelDrops = s1.KernelDrops - s0.KernelDrops,
            SequenceGaps = s1.Gaps - s0.Gaps,
            SendBlocked = s1.SendBlocked - s0.SendBlocked,
            FramesPerSendCall = sendCalls == 0 ? 0 : (double)(s1.FramesSent - s0.FramesSent) / sendCalls,
            FramesPerReceiveCall = receiveCalls == 0 ? 0 : (double)(s1.FramesReceivedRaw - s0.FramesReceivedRaw) / receiveCalls,
            LoopAllocatedBytes = s1.LoopAllocated - s0.LoopAllocated,
            IoAllocatedBytes = s1.IoAllocated - s0.IoAllocated,
            LoopSleeps = s1.Sleeps - s0.Sleeps,
            FramesCreated = s1.PoolCreated - s0.PoolCreated,
        };
    }

    private sealed record ProbeNode(NodeEventLoop Loop, IRawEthernetLink Link, FloodService Flood) : IDisposable
    {
        public Sample Snapshot()
        {
            var (delivered, bytes, gaps, allocated) = Loop.InvokeAsync(() =>
                (Flood.FramesReceived, Flood.BytesReceived, Flood.SequenceGaps, GC.GetAllocatedBytesForCurrentThread())).Result;
            var c = Link.Counters;
            return new Sample(
                c.FramesSent, c.BytesSent, c.SendBatches, c.SendBlocked, c.FramesReceived, c.ReceiveBatches, c.KernelDrops,
                delivered, bytes, gaps, allocated, Link.IoThreadAllocatedBytes, Loop.Sleeps, Loop.Host.Frames.Created,
                ThreadCpu.Nanoseconds(Loop.LoopThreadId) + ThreadCpu.Nanoseconds(Link.IoThreadId));
        }

        public void Dispose() => Loop.Dispose();
    }

    private readonly record struct Sample(
        long FramesSent, long BytesSent, long SendBatches, long SendBlocked, long FramesReceivedRaw, long ReceiveBatches, long KernelDrops,
        long FramesDelivered, long BytesDelivered, long Gaps, long LoopAllocated, long IoAllocated, long Sleeps, long PoolCreated, long CpuNs);
}
