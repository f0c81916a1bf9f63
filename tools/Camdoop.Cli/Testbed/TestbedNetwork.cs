using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Testbed;

/// <summary>
/// Link shaping applied to every torus link. A rate alone uses tbf (always available); a one-way delay or a loss
/// rate needs netem, which some kernels lack (then `testbed up` says so instead of silently ignoring it).
/// </summary>
public sealed record LinkShaping(string? Rate, long DelayNs, double LossPercent)
{
    public bool IsNone => Rate is null && DelayNs == 0 && LossPercent == 0;

    public bool NeedsNetem => DelayNs > 0 || LossPercent > 0;

    /// <summary>
    /// The qdisc of a server's uplink and of its switch port: the rate alone, so the switched network's links run at
    /// the torus links' rate (TCP Camdoop against Camdoop on equal links), without the torus's emulated delay or loss;
    /// null when there is no rate.
    /// </summary>
    public string? UplinkQdiscArguments() => Rate is null ? null : $"tbf rate {Rate} burst 64kb latency 50ms";

    /// <summary>The tc qdisc arguments after "root".</summary>
    public string QdiscArguments()
    {
        if (!NeedsNetem)
        {
            // Burst of a few jumbo frames; up to 50 ms of queue before tail drop.
            return $"tbf rate {Rate} burst 64kb latency 50ms";
        }
        var parts = new List<string> { "netem" };
        if (DelayNs > 0)
        {
            parts.Add(string.Create(CultureInfo.InvariantCulture, $"delay {DelayNs / 1000.0:0.###}us"));
        }
        if (Rate is not null)
        {
            parts.Add($"rate {Rate}");
        }
        if (LossPercent > 0)
        {
            parts.Add(string.Create(CultureInfo.InvariantCulture, $"loss {LossPercent:0.###}%"));
        }
        parts.Add("limit 10000");
        return string.Join(' ', parts);
    }
}

/// <summary>Creates and removes the namespaces, links, shaping and switch of an emulated testbed.</summary>
public static class TestbedNetwork
{
    public const int TorusMtu = 9000;

    public static void Create(TestbedLayout layout, LinkShaping shaping, Action<string>? progress = null)
    {
        if (!SystemCommand.IsRoot)
        {
            throw new CliException("the emulated testbed needs root (network namespaces, veth and tc); run it with sudo");
        }
        var torus = layout.Torus;
        var existing = ListNamespaces().Where(layout.Owns).ToList();
        if (existing.Count > 0)
        {
            throw new CliException($"a testbed with prefix '{layout.Prefix}' already exists ({existing.Count} namespaces); run 'camdoop testbed down' first");
        }

        if (shaping.NeedsNetem && !NetemAvailable())
        {
            throw new CliException("link delay and loss need the kernel's sch_netem module, which this kernel does not have; use --link-rate alone");
        }

        progress?.Invoke($"creating {torus.Count + 1} namespaces");
        var rootBatch = new List<string> { $"netns add {layout.SwitchNamespace}" };
        foreach (var c in torus.All())
        {
            rootBatch.Add($"netns add {layout.ServerNamespace(c)}");
        }
        SystemCommand.IpBatch(null, rootBatch);

        progress?.Invoke($"wiring {torus.Count * 3} torus links");
        var links = new List<string>();
        foreach (var c in torus.All())
        {
            foreach (var port in new[] { Port.XPlus, Port.YPlus, Port.ZPlus })
            {
                var n = torus.Neighbour(c, port);
                links.Add(
                    $"link add {TestbedLayout.PortInterface(port)} netns {layout.ServerNamespace(c)} mtu {TorusMtu} type veth " +
                    $"peer name {TestbedLayout.PortInterface(port.Opposite())} netns {layout.ServerNamespace(n)} mtu {TorusMtu}");
            }
            links.Add(
                $"link add {layout.ServerUplink} netns {layout.ServerNamespace(c)} type veth " +
                $"peer name {layout.SwitchPort(c)} netns {layout.SwitchNamespace}");
        }
        links.Add($"link add {layout.HostInterface} type veth peer name host netns {layout.SwitchNamespace}");
        SystemCommand.IpBatch(null, links);

        progress?.Invoke("bringing links up");
        var switchCmds = new List<string>
        {
            $"link add {layout.BridgeName} type bridge",
            $"link set {layout.BridgeName} up",
            "link set lo up",
            $"link set host master {layout.BridgeName} up",
        };
        foreach (var c in torus.All())
        {
            switchCmds.Add($"link set {layout.SwitchPort(c)} master {layout.BridgeName} up");
        }
        SystemCommand.IpBatch(layout.SwitchNamespace, switchCmds);
        foreach (var c in torus.All())
        {
            var ns = layout.ServerNamespace(c);
            var cmds = new List<string> { "link set lo up" };
            foreach (var port in Ports.All)
            {
                cmds.Add($"link set {TestbedLayout.PortInterface(port)} up");
            }
            cmds.Add($"addr add {layout.ServerAddress(c)}/16 dev {layout.ServerUplink}");
            cmds.Add($"link set {layout.ServerUplink} up");
            SystemCommand.IpBatch(ns, cmds);
        }
        if (!shaping.IsNone)
        {
            Shape(layout, shaping);
        }
        SystemCommand.IpBatch(null, [$"addr add {layout.HostAddress}/16 dev {layout.HostInterface}", $"link set {layout.HostInterface} up"]);
    }

    /// <summary>
    /// Shapes every torus link of the testbed, replacing any shaping it had (none: a plain FIFO again), and gives
    /// every uplink and switch port the torus links' rate.
    /// </summary>
    public static void Shape(TestbedLayout layout, LinkShaping shaping)
    {
        string qdisc = shaping.IsNone ? "pfifo limit 1000" : shaping.QdiscArguments();
        string uplink = shaping.UplinkQdiscArguments() ?? "pfifo limit 1000";
        foreach (var c in layout.Torus.All())
        {
            SystemCommand.TcBatch(layout.ServerNamespace(c), Ports.All.ToArray().Select(p =>
                $"qdisc replace dev {TestbedLayout.PortInterface(p)} root {qdisc}").Append($"qdisc replace dev {layout.ServerUplink} root {uplink}"));
        }
        SystemCommand.TcBatch(layout.SwitchNamespace, layout.Torus.All().Select(c => $"qdisc replace dev {layout.SwitchPort(c)} root {uplink}"));
    }

    /// <summary>Sets both ends of the torus link on <paramref name="port"/> of <paramref name="server"/> down or up: a pulled or replugged cable.</summary>
    public static void SetLink(TestbedLayout layout, Coordinate server, Port port, bool up)
    {
        var neighbour = layout.Torus.Neighbour(server, port);
        string state = up ? "up" : "down";
        SystemCommand.IpBatch(layout.ServerNamespace(server), [$"link set {TestbedLayout.PortInterface(port)} {state}"]);
        SystemCommand.IpBatch(layout.ServerNamespace(neighbour), [$"link set {TestbedLayout.PortInterface(port.Opposite())} {state}"]);
    }

    /// <summary>Whether tc netem works here (tried on a scratch veth in a scratch namespace).</summary>
    public static bool NetemAvailable()
    {
        string ns = $"cdprobe{Environment.ProcessId}";
        try
        {
            SystemCommand.Ip("netns", "add", ns);
            SystemCommand.Ip("-n", ns, "link", "add", "probe0", "type", "veth", "peer", "name", "probe1");
            SystemCommand.Run("tc", ["-n", ns, "qdisc", "add", "dev", "probe0", "root", "netem", "delay", "1ms"]);
            return true;
        }
        catch (CliException)
        {
            return false;
        }
        finally
        {
            SystemCommand.Run("ip", ["netns", "del", ns], allowFailure: true);
        }
    }

    /// <summary>Removes every namespace and the host link of the testbed. Idempotent; works after a crash.</summary>
    public static int Destroy(TestbedLayout layout)
    {
        if (!SystemCommand.IsRoot)
        {
            throw new CliException("removing the emulated testbed needs root; run it with sudo");
        }
        var mine = ListNamespaces().Where(layout.Owns).ToList();
        KillProcessesIn(mine);
        if (mine.Count > 0)
        {
            SystemCommand.Run("ip", ["-batch", "-"], string.Join('\n', mine.Select(ns => $"netns del {ns}")) + "\n", allowFailure: true);
        }
        SystemCommand.Run("ip", ["link", "del", layout.HostInterface], allowFailure: true);
        return mine.Count;
    }

    public static IReadOnlyList<string> ListNamespaces()
    {
        if (!Directory.Exists("/run/netns"))
        {
            return [];
        }
        return Directory.GetFiles("/run/netns").Select(Path.GetFileName).OfType<string>().ToList();
    }

    /// <summary>
    /// Kills whatever still runs in the namespaces (node processes after a crash of `testbed up`): every process first,
    /// then one bounded wait for all of them, so a dozen namespaces do not cost a dozen timeouts.
    /// </summary>
    public static void KillProcessesIn(IEnumerable<string> namespaces)
    {
        var pids = new List<int>();
        foreach (var netns in namespaces)
        {
            foreach (var text in SystemCommand.Run("ip", ["netns", "pids", netns], allowFailure: true)
                .Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
            {
                if (int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out int pid) && pid != Environment.ProcessId)
                {
                    pids.Add(pid);
                }
            }
        }
        TestbedLauncher.SignalAndWait(pids, "KILL", TimeSpan.FromSeconds(5));
    }
}
