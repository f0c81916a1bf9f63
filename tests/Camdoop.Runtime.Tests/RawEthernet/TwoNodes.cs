using System.Diagnostics;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Logging;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.Runtime.Tests.RawEthernet;

/// <summary>
/// Two servers of a 3x3x3 torus, (0,0,0) and (1,0,0), each in its own network namespace with its own event loop,
/// joined by a veth pair on A's X+ port and B's X- port, each side's link opened with its own driver (AF_PACKET unless
/// told otherwise). Dispose stops both nodes and deletes both namespaces.
/// </summary>
internal sealed class TwoNodes : IDisposable
{
    public static readonly Torus Torus = new(3, 3, 3);
    public static readonly Coordinate A = new(0, 0, 0);
    public static readonly Coordinate B = new(1, 0, 0);
    public const Port PortA = Port.XPlus;
    public const Port PortB = Port.XMinus;

    /// <summary>
    /// Beacons every 20 ms, down after 50 silent intervals (1 s). A link that flaps drops what is sent while it is
    /// down, and these tests count frames exactly; with 200 ms a two-CPU machine also running the testbed's 27 node
    /// processes (the solution's test projects run side by side) starved a loop long enough to flap the link.
    /// </summary>
    public static readonly NodeOptions Options = new()
    {
        BeaconInterval = 20 * NodeOptions.Millisecond,
        BeaconMisses = 50,
        QueueCapacity = 128,
        IsolateServiceFaults = false,
    };

    private readonly LockedStringWriter _log = new();
    private readonly NodeLog _nodeLog;

    private readonly LinkDriver _driverA;
    private readonly LinkDriver _driverB;

    private TwoNodes(VethLink veth, LinkDriver driverA, LinkDriver driverB)
    {
        Veth = veth;
        _driverA = driverA;
        _driverB = driverB;
        _nodeLog = new NodeLog(_log, LogLevel.Debug);
    }

    public VethLink Veth { get; }

    public NodeEventLoop? LoopA { get; private set; }

    public NodeEventLoop? LoopB { get; private set; }

    public PatternService ServiceA => LoopA!.Host.GetService<PatternService>()!;

    public PatternService ServiceB => LoopB!.Host.GetService<PatternService>()!;

    public string Log => _log.ToString();

    /// <summary>
    /// Starts both nodes; A's link uses <paramref name="driver"/>, B's <paramref name="driverB"/> (the same when null).
    /// <paramref name="prefix"/> names the namespaces (VethLink's scheme), so that test classes never share them.
    /// </summary>
    public static TwoNodes Start(int mtu = 9000, RawEthernetOptions? linkOptions = null, LinkDriver driver = LinkDriver.AfPacket,
                                 LinkDriver? driverB = null, string prefix = VethLink.DefaultPrefix)
    {
        var nodes = new TwoNodes(VethLink.Create(mtu, prefix), driver, driverB ?? driver);
        try
        {
            nodes.LoopA = nodes.StartNode(sideA: true, linkOptions);
            nodes.LoopB = nodes.StartNode(sideA: false, linkOptions);
            return nodes;
        }
        catch
        {
            nodes.Dispose();
            throw;
        }
    }

    /// <summary>Starts a fresh node on one side (the previous one must have been stopped), with that side's driver.</summary>
    public NodeEventLoop StartNode(bool sideA, RawEthernetOptions? linkOptions = null)
    {
        var pool = new FramePool();
        var self = sideA ? A : B;
        var port = sideA ? PortA : PortB;
        var options = (linkOptions ?? new RawEthernetOptions()) with { Driver = sideA ? _driverA : _driverB };
        var link = NetworkNamespace.Run(sideA ? Veth.NamespaceA : Veth.NamespaceB,
            () => RawEthernetLinks.Open(sideA ? Veth.InterfaceA : Veth.InterfaceB, pool, options));
        var loop = new NodeEventLoop(driver => new NodeHost(self, Torus, driver, pool, Options), _nodeLog);
        loop.Host.Register(new PatternService(port));
        loop.AttachLink(port, link);
        loop.Start();
        if (sideA)
        {
            LoopA = loop;
        }
        else
        {
            LoopB = loop;
        }
        return loop;
    }

    /// <summary>Waits until both ends see the link up (beacons exchanged).</summary>
    public void WaitForLinkUp()
    {
        WaitUntil(LoopA!, h => h.IsLinkUp(PortA), "A's link up");
        WaitUntil(LoopB!, h => h.IsLinkUp(PortB), "B's link up");
    }

    /// <summary>Polls <paramref name="condition"/> on the loop thread until it holds; fails the test with the log otherwise.</summary>
    public void WaitUntil(NodeEventLoop loop, Func<NodeHost, bool> condition, string what, double seconds = 5)
    {
        var clock = Stopwatch.StartNew();
        while (clock.Elapsed.TotalSeconds < seconds)
        {
            if (loop.InvokeAsync(() => condition(loop.Host)).Result)
            {
                return;
            }
            Thread.Sleep(5);
        }
        Assert.Fail($"timed out after {seconds} s waiting for {what}; log:\n{Log}");
    }

    public T On<T>(NodeEventLoop loop, Func<T> func) => loop.InvokeAsync(func).Result;

    /// <summary>Sends the sizes from one side in windows, each window only once the previous one has fully arrived.</summary>
    public void SendInWindows(bool fromA, IReadOnlyList<int> sizes, int window = 256)
    {
        var sender = fromA ? LoopA! : LoopB!;
        var receiver = fromA ? LoopB! : LoopA!;
        long before = On(receiver, () => receiver.Host.GetService<PatternService>()!.Received);
        for (int start = 0; start < sizes.Count; start += window)
        {
            var chunk = sizes.Skip(start).Take(window).ToArray();
            sender.Post(() => sender.Host.GetService<PatternService>()!.Send(chunk));
            long target = before + start + chunk.Length;
            WaitUntil(receiver, h => h.GetService<PatternService>()!.Received >= target, $"{target - before} frames at {(fromA ? "B" : "A")}; sender link {sender.Link(fromA ? PortA : PortB)!.Counters}; receiver link {receiver.Link(fromA ? PortB : PortA)!.Counters}");
        }
    }

    public void Dispose()
    {
        try
        {
            LoopA?.Dispose();
            LoopB?.Dispose();
        }
        finally
        {
            Veth.Dispose();
        }
    }
}

/// <summary>A string sink that log writers on several threads may share and a test may read at any time.</summary>
internal sealed class LockedStringWriter : StringWriter
{
    private readonly Lock _lock = new();

    public override void WriteLine(string? value)
    {
        lock (_lock)
        {
            base.WriteLine(value);
        }
    }

    public override string ToString()
    {
        lock (_lock)
        {
            return base.ToString();
        }
    }
}
