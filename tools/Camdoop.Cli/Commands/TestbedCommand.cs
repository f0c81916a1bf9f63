using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.Hosting;
using Camdoop.Runtime.Links.Pcap;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop testbed up|status|kill|start|link|down|bench`: the emulated cube of network namespaces and node processes.</summary>
public static class TestbedCommand
{
    public static Command Create() =>
        new Command("testbed", "Emulated CamCube: one network namespace and node process per server, veth torus links, a switch.")
            .Add(Up())
            .Add(StatusCommand())
            .Add(Kill())
            .Add(Start())
            .Add(Replace())
            .Add(Link())
            .Add(Down())
            .Add(TestbedBenchCommand.Create());

    private static Command Up() =>
        new Command("up", "Create the namespaces and links, start one `camdoop node` per server, wait until every server hears its six neighbours.")
        {
            Details = "Needs root. Links are veth pairs with MTU 9000; --link-rate shapes every link with tc tbf. The switch\n" +
                      "network (10.<subnet>.0.0/16) reaches every server's front-end from this host.",
        }
            .Option("torus", "Torus size", "XxYxZ", "3x3x3")
            .Option("link-rate", "Rate of every torus link (tc tbf), e.g. 1gbit or 100mbit", "RATE")
            .Option("link-delay", "One-way delay of every link (needs the kernel's netem)", "DURATION")
            .Option("link-loss", "Percent of frames every link drops at random, e.g. 1 (needs the kernel's netem)", "PERCENT")
            .Option("link-driver", "How the nodes move frames: pcap (libpcap via SharpPcap) or afpacket (AF_PACKET sockets)", "DRIVER", LinkDrivers.Default.Name())
            .Option("prefix", "Namespace prefix (2-6 letters or digits)", "NAME", TestbedState.DefaultPrefix)
            .Option("subnet", "Second octet of the switch network 10.N.0.0/16", "N", "77")
            .Option("data-root", "Directory for the servers' data, configs and logs", "DIR")
            .Option("frontend-port", "TCP port of every server's front-end", "PORT", "7070")
            .Option("web-port", "TCP port of every server's live web view (HTTPS; 0: none); 'camdoop web' prints how to log in", "PORT", "7080")
            .Option("beacon-interval", "Liveness beacon interval", "DURATION", "100ms")
            .Option("beacon-misses", "Silent intervals before a link is declared down (3 s: 27 nodes sharing a few cores stall for over a second at times)", "N", "30")
            .Option("timeout", "How long to wait for every server to be up", "DURATION", "180s")
            .Option("rereplicate-after", "How long a server must be unreachable before its replicas are made again on others", "DURATION", "600s")
            .Option("rereplicate-rate", "Bytes a second each server sends, on average, to make replicas again (0: no cap), e.g. 200MB", "SIZE", "50MB")
            .Flag("no-warm-up", "Start the nodes without warming their job code paths up (the first job is then slower)")
            .Option("receive-buffer", "Kernel receive buffer of the links (tests make it tiny so that the kernel drops frames)", "SIZE")
            .Option("receive-buffer-at", "Apply --receive-buffer only to this server", "X,Y,Z")
            .Option("scrub-interval", "Time between the end of one scrub pass over a server's replicas and the next, whole seconds (0: no scrubbing; default: the node's, 86400s)", "DURATION")
            .Flag("json", "Print the testbed as JSON")
            .Handle(RunUp);

    private static Command StatusCommand() =>
        new Command("status", "Show the testbed's servers, their links and their state, and the front-end address.")
            .Option("prefix", "Namespace prefix", "NAME", TestbedState.DefaultPrefix)
            .Flag("json", "Print as JSON (with a `frontend` field)")
            .Handle(RunStatus);

    private static Command Kill() =>
        new Command("kill", "Crash one server: SIGKILL its node process. Its neighbours notice by its missing beacons.")
        {
            Details = "The server stays down (its namespace and links remain) until 'testbed down'. Jobs running on the testbed\n" +
                      "recover: the live servers take over its vertices and map tasks. Prints the time of the kill (Unix ms)\n" +
                      "to compare with the detection time in 'camdoop status --json'.",
        }
            .Argument("server", "The server, X,Y,Z")
            .Option("prefix", "Namespace prefix", "NAME", TestbedState.DefaultPrefix)
            .Handle(RunKill);

    private static Command Start() =>
        new Command("start", "Start a killed server again: a new node process on the same config and data directory.")
        {
            Details = "Needs root. The node loads the replicas its data directory holds and serves them again; waits until it\n" +
                      "hears its six neighbours. Jobs that ran while it was down do not take it back.",
        }
            .Argument("server", "The server, X,Y,Z")
            .Option("prefix", "Namespace prefix", "NAME", TestbedState.DefaultPrefix)
            .Option("timeout", "How long to wait for the server to be up", "DURATION", "60s")
            .Handle(RunStart);

    private static Command Replace() =>
        new Command("replace", "Replace a server's disk: stop its node, empty its data directory, start it again; it receives its share back.")
        {
            Details = "Needs root. Everything in the server's data directory goes but its node config and its certificates (what\n" +
                      "an operator installs on a new disk). The other servers notice it is back and send it the replicas it\n" +
                      "should hold; 'camdoop fsck' shows when they are all there. Waits until it hears its six neighbours.",
        }
            .Argument("server", "The server, X,Y,Z")
            .Option("prefix", "Namespace prefix", "NAME", TestbedState.DefaultPrefix)
            .Option("timeout", "How long to wait for the server to be up", "DURATION", "60s")
            .Handle(RunReplace);

    private static Command Link() =>
        new Command("link", "Pull (down) or replug (up) the cable on one port of a server: both ends of that torus link.")
            .Argument("server", "The server, X,Y,Z")
            .Argument("port", "The port: +X, -X, +Y, -Y, +Z or -Z")
            .Argument("state", "down or up")
            .Option("prefix", "Namespace prefix", "NAME", TestbedState.DefaultPrefix)
            .Handle(RunLink);

    private static Command Down() =>
        new Command("down", "Stop the node processes and remove every namespace and link of the testbed (idempotent, also after a crash).")
            .Option("prefix", "Namespace prefix", "NAME", TestbedState.DefaultPrefix)
            .Flag("keep-data", "Keep the data directories (chunks, logs)")
            .Handle(RunDown);

    private static int RunUp(ParsedArguments args)
    {
        var torus = CommonOptions.Torus(args);
        string prefix = args.Required("prefix");
        int subnet = args.Int("subnet", 1, 254);
        TestbedLayout layout;
        try
        {
            layout = new TestbedLayout(prefix, torus, subnet);
        }
        catch (ArgumentException e)
        {
            throw CliException.Usage($"testbed up: {e.Message}");
        }
        string? rate = args.String("link-rate");
        if (rate is not null && !IsRate(rate))
        {
            throw CliException.Usage($"testbed up: --link-rate must be a rate like 1gbit or 100mbit, not '{rate}'");
        }
        long delay = args.Has("link-delay") ? args.Nanoseconds("link-delay") : 0;
        double loss = args.Has("link-loss") ? args.Double("link-loss", 0, 100) : 0;
        var shaping = new LinkShaping(rate, delay, loss);
        string driverName = args.Required("link-driver");
        if (!LinkDrivers.TryParse(driverName, out var driver))
        {
            throw CliException.Usage($"testbed up: --link-driver must be pcap or afpacket, not '{driverName}'");
        }
        if (!SystemCommand.IsRoot)
        {
            throw new CliException("the emulated testbed needs root (network namespaces, veth links, tc, raw sockets); run it with sudo");
        }
        if (driver == LinkDriver.Pcap && PcapTransport.WhyUnavailable() is { } noPcap)
        {
            throw new CliException($"--link-driver pcap: {noPcap}");
        }
        if (shaping.NeedsNetem && !TestbedNetwork.NetemAvailable())
        {
            throw new CliException("--link-delay and --link-loss need the kernel's sch_netem module, which this kernel does not have; use --link-rate alone (--receive-buffer makes the kernel drop frames instead)");
        }
        if (TestbedState.TryLoad(prefix) is { } existing)
        {
            throw new CliException($"testbed '{prefix}' is already up ({existing.Torus}, front-end {existing.FrontEnd}); run 'camdoop testbed down --prefix {prefix}' first");
        }
        string dataRoot = args.String("data-root") ?? TestbedDataRoot.Default(prefix);
        // Leftovers of an earlier testbed of this prefix (down --keep-data) go: the stores start empty.
        TestbedDataRoot.Prepare(dataRoot, isDefault: !args.Has("data-root"));
        var receiveBuffers = new Dictionary<Coordinate, int>();
        if (args.Has("receive-buffer"))
        {
            long bytes = args.Bytes("receive-buffer");
            if (bytes is < 1024 or > int.MaxValue)
            {
                throw CliException.Usage("testbed up: --receive-buffer must be at least 1KB");
            }
            if (args.String("receive-buffer-at") is { } at)
            {
                if (!Coordinate.TryParse(at, out var c) || !torus.Contains(c))
                {
                    throw CliException.Usage($"testbed up: --receive-buffer-at must be a server of the {torus} torus, like 1,1,1");
                }
                receiveBuffers[c] = (int)bytes;
            }
            else
            {
                foreach (var c in torus.All())
                {
                    receiveBuffers[c] = (int)bytes;
                }
            }
        }
        int? scrubInterval = null;
        if (args.Has("scrub-interval"))
        {
            long ns = args.Nanoseconds("scrub-interval");
            if (ns < 0 || ns % 1_000_000_000 != 0 || ns / 1_000_000_000 > 31_536_000)
            {
                throw CliException.Usage("testbed up: --scrub-interval must be whole seconds, from 0s (no scrubbing) to 31536000s");
            }
            scrubInterval = (int)(ns / 1_000_000_000);
        }
        var options = new TestbedNodeOptions
        {
            FrontEndPort = args.Int("frontend-port", 1, 65535),
            WebPort = args.Int("web-port", 0, 65535),
            BeaconIntervalMs = args.Nanoseconds("beacon-interval") / 1e6,
            BeaconMisses = args.Int("beacon-misses", 1, 1000),
            ReceiveBufferBytes = receiveBuffers,
            LinkDriver = driver,
            WarmUp = !args.Flag("no-warm-up"),
            ReReplicateAfterSeconds = Math.Max(1, args.Nanoseconds("rereplicate-after") / 1e9),
            ReReplicateBytesPerSecond = args.Bytes("rereplicate-rate"),
            ScrubIntervalSeconds = scrubInterval,
        };
        if (options.WebPort == options.FrontEndPort)
        {
            throw CliException.Usage($"testbed up: --web-port and --frontend-port are both {options.WebPort}");
        }
        var timeout = TimeSpan.FromTicks(args.Nanoseconds("timeout") / 100);
        bool json = args.Flag("json");
        TestbedState state;
        using (var bar = new ProgressBar("testbed up"))
        {
            TestbedNetwork.Create(layout, shaping, step => bar.Report(0, step));
            bar.Report(0, $"starting {torus.Count} node processes");
            try
            {
                state = TestbedLauncher.Launch(layout, dataRoot, rate, options);
                state.Save();
            }
            catch
            {
                TestbedNetwork.Destroy(layout);
                TestbedState.Delete(prefix);
                throw;
            }
            try
            {
                TestbedLauncher.WaitUntilUp(state, timeout, (up, n) => bar.Report((double)up / n, $"{up}/{n} servers hear their six neighbours"));
            }
            catch (CliException e)
            {
                throw new CliException($"{e.Message} (inspect with 'camdoop testbed status --prefix {prefix}', remove with 'camdoop testbed down --prefix {prefix}')");
            }
        }
        if (json)
        {
            JsonOutput.Write(Console.Out, StatusJson(state));
        }
        else
        {
            Console.Out.WriteLine($"testbed '{prefix}' up: {torus.Count} servers ({torus}), links {rate ?? "unshaped"} ({driver.Name()}), data in {state.DataRoot}");
            Console.Out.WriteLine($"front-end: {state.FrontEnd}");
            if (state.Web is { } web)
            {
                Console.Out.WriteLine($"web view: {web} (log in with the link 'camdoop web --prefix {prefix}' prints)");
            }
            Console.Out.WriteLine($"job assemblies: {state.JobAssemblyDirectory} (copy MyJobs.dll there, then submit --job MyJobs.dll#Namespace.Type)");
        }
        return 0;
    }

    private static int RunStatus(ParsedArguments args)
    {
        string prefix = args.Required("prefix");
        var state = TestbedState.TryLoad(prefix)
            ?? throw new CliException($"no testbed '{prefix}' is up (no {TestbedState.PathFor(prefix)}); start one with 'camdoop testbed up'");
        var report = StatusJson(state);
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, report);
            return 0;
        }
        Console.Out.WriteLine($"testbed '{state.Prefix}': {state.Torus}, links {state.LinkRate ?? "unshaped"} ({state.LinkDriver ?? "afpacket"}), front-end {state.FrontEnd}, data {state.DataRoot}");
        Console.Out.WriteLine($"{"server",-8} {"address",-14} {"pid",7} {"state",-8} {"links",-5} {"reach",5} {"drops",7} {"rejected",8}  down links");
        foreach (var s in report.Servers)
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{s.Coordinate,-8} {s.Address,-14} {s.Pid,7} {s.State,-8} {s.LinksUp + "/6",-5} {s.Reachable,5} {s.KernelDrops,7} {s.FramesRejected,8}  {string.Join(' ', s.Links.Where(l => !l.Up).Select(l => l.Port))}"));
        }
        int healthy = report.Servers.Count(s => s.State == "running" && s.LinksUp == Ports.Count);
        Console.Out.WriteLine($"{healthy}/{report.Servers.Count} servers running with all six links up");
        return healthy == report.Servers.Count ? 0 : 1;
    }

    private static int RunKill(ParsedArguments args)
    {
        var (state, server) = LoadWithServer(args, "kill");
        if (!TestbedLauncher.IsAlive(server.Pid))
        {
            throw new CliException($"server {server.Coordinate} of testbed '{state.Prefix}' is not running (pid {server.Pid})");
        }
        if (!TestbedLauncher.Kill(server.Pid))
        {
            throw new CliException($"could not kill server {server.Coordinate} (pid {server.Pid}): the process is not its node");
        }
        long at = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"server {server.Coordinate} of testbed '{state.Prefix}' killed (pid {server.Pid}) at {at} (Unix ms)"));
        return 0;
    }

    private static int RunStart(ParsedArguments args)
    {
        var (state, server) = LoadWithServer(args, "start");
        var timeout = TimeSpan.FromTicks(args.Nanoseconds("timeout") / 100);
        if (TestbedLauncher.IsAlive(server.Pid))
        {
            throw new CliException($"server {server.Coordinate} of testbed '{state.Prefix}' is running (pid {server.Pid}); kill it first with 'camdoop testbed kill {server.Coordinate}'");
        }
        var started = server with { Pid = TestbedLauncher.Restart(server) };
        var servers = state.Servers.Select(s => s.Coordinate == server.Coordinate ? started : s).ToList();
        var updated = state with { Servers = servers };
        updated.Save();
        TestbedLauncher.WaitUntilUp(updated, [started], timeout);
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"server {server.Coordinate} of testbed '{state.Prefix}' started (pid {started.Pid}) on {server.DataDirectory}"));
        return 0;
    }

    private static int RunReplace(ParsedArguments args)
    {
        var (state, server) = LoadWithServer(args, "replace");
        var timeout = TimeSpan.FromTicks(args.Nanoseconds("timeout") / 100);
        TestbedLauncher.StopNodes([server], TimeSpan.FromSeconds(15));
        if (TestbedLauncher.IsAlive(server.Pid) && !TestbedLauncher.Kill(server.Pid))
        {
            throw new CliException($"could not stop server {server.Coordinate} (pid {server.Pid})");
        }
        int removed = TestbedDataRoot.EmptyServerDirectory(server.DataDirectory, keep: ["node.json", "certs"]);
        var started = server with { Pid = TestbedLauncher.Restart(server) };
        var updated = state with { Servers = [.. state.Servers.Select(s => s.Coordinate == server.Coordinate ? started : s)] };
        updated.Save();
        TestbedLauncher.WaitUntilUp(updated, [started], timeout);
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"server {server.Coordinate} of testbed '{state.Prefix}' replaced (pid {started.Pid}): {removed} files removed from {server.DataDirectory}; the other servers send it its share"));
        return 0;
    }

    private static int RunLink(ParsedArguments args)
    {
        string portText = args.Argument("port")!;
        if (!Ports.TryParse(portText, out var port))
        {
            throw CliException.Usage($"testbed link: '{portText}' is not a port (+X, -X, +Y, -Y, +Z or -Z)");
        }
        bool up = args.Argument("state")!.ToLowerInvariant() switch
        {
            "up" => true,
            "down" => false,
            var other => throw CliException.Usage($"testbed link: the state must be down or up, not '{other}'"),
        };
        var (state, server) = LoadWithServer(args, "link");
        var layout = state.Layout();
        var self = server.Parsed;
        var neighbour = layout.Torus.Neighbour(self, port);
        if (neighbour == self)
        {
            throw CliException.Usage($"testbed link: server {self.Name} has no link on {port.Name()} in a {layout.Torus} torus");
        }
        TestbedNetwork.SetLink(layout, self, port, up);
        Console.Out.WriteLine($"link {self.Name}:{port.Name()} - {neighbour.Name}:{port.Opposite().Name()} {(up ? "up" : "down")}");
        return 0;
    }

    private static (TestbedState State, TestbedServer Server) LoadWithServer(ParsedArguments args, string command)
    {
        string prefix = args.Required("prefix");
        string text = args.Argument("server")!;
        if (!Coordinate.TryParse(text, out var c))
        {
            throw CliException.Usage($"testbed {command}: '{text}' is not a server X,Y,Z");
        }
        if (!SystemCommand.IsRoot)
        {
            throw new CliException($"testbed {command} needs root (the testbed's processes and namespaces are root's); run it with sudo");
        }
        var state = TestbedState.TryLoad(prefix)
            ?? throw new CliException($"no testbed '{prefix}' is up (no {TestbedState.PathFor(prefix)}); start one with 'camdoop testbed up'");
        var server = state.Servers.FirstOrDefault(s => s.Parsed == c && s.Coordinate.Count(ch => ch == ',') == 2)
            ?? throw new CliException($"server {text} is not on testbed '{prefix}' ({state.Torus})");
        return (state, server);
    }

    private static int RunDown(ParsedArguments args)
    {
        string prefix = args.Required("prefix");
        if (!SystemCommand.IsRoot)
        {
            throw new CliException("removing the emulated testbed needs root (network namespaces); run it with sudo");
        }
        var state = TestbedState.TryLoad(prefix);
        TestbedLayout layout;
        try
        {
            layout = state?.Layout() ?? new TestbedLayout(prefix, new Torus(2, 2, 2));
        }
        catch (ArgumentException e)
        {
            throw CliException.Usage($"testbed down: {e.Message}");
        }
        if (state is not null)
        {
            TestbedLauncher.StopNodes(state.Servers, TimeSpan.FromSeconds(10));
        }
        int removed = TestbedNetwork.Destroy(layout);
        if (state is not null)
        {
            if (!args.Flag("keep-data") && Directory.Exists(state.DataRoot))
            {
                Directory.Delete(state.DataRoot, recursive: true);
            }
        }
        // Also after a crash that left no state: the key must not outlive its testbed.
        TestbedState.Delete(prefix);
        Console.Out.WriteLine(removed == 0 && state is null
            ? $"testbed '{prefix}': nothing to remove"
            : $"testbed '{prefix}' down: {removed} namespaces removed");
        return 0;
    }

    private static bool IsRate(string text)
    {
        int i = 0;
        while (i < text.Length && (char.IsAsciiDigit(text[i]) || text[i] == '.'))
        {
            i++;
        }
        return i > 0 && text[i..].ToLowerInvariant() is "bit" or "kbit" or "mbit" or "gbit" or "bps" or "kbps" or "mbps" or "gbps";
    }

    private static TestbedReport StatusJson(TestbedState state) => new()
    {
        Prefix = state.Prefix,
        Torus = state.Torus,
        Frontend = state.FrontEnd,
        Web = state.Web,
        DataRoot = state.DataRoot,
        LinkRate = state.LinkRate,
        LinkDriver = state.LinkDriver,
        JobAssemblies = state.JobAssemblyDirectory,
        Servers = state.Servers.Select(s =>
        {
            var status = NodeStatus.TryRead(s.StatusPath);
            bool alive = TestbedLauncher.IsAlive(s.Pid);
            return new TestbedServerReport
            {
                Coordinate = s.Coordinate,
                Namespace = s.Namespace,
                Address = s.Address,
                Pid = s.Pid,
                State = !alive ? "dead" : status?.State ?? "starting",
                LinksUp = alive ? status?.LinksUp ?? 0 : 0,
                Reachable = status?.ReachableServers ?? 0,
                KernelDrops = status?.Links.Sum(l => l.KernelDrops) ?? 0,
                FramesRejected = status?.Counters.GetValueOrDefault("node")?.GetValueOrDefault("framesRejected") ?? 0,
                Links = status?.Links.Select(l => new TestbedLinkReport
                {
                    Port = l.Port,
                    Interface = l.Interface,
                    Neighbour = l.Neighbour,
                    Up = alive && l.Up,
                    Carrier = l.Carrier,
                    Heard = l.Heard,
                }).ToList() ?? [],
            };
        }).ToList(),
    };

    private sealed record TestbedReport
    {
        public required string Prefix { get; init; }
        public required string Torus { get; init; }
        public required string Frontend { get; init; }
        public string? Web { get; init; }
        public required string DataRoot { get; init; }
        public string? LinkRate { get; init; }
        public string? LinkDriver { get; init; }
        public string? JobAssemblies { get; init; }
        public required IReadOnlyList<TestbedServerReport> Servers { get; init; }
    }

    private sealed record TestbedServerReport
    {
        public required string Coordinate { get; init; }
        public required string Namespace { get; init; }
        public required string Address { get; init; }
        public int Pid { get; init; }
        public required string State { get; init; }
        public int LinksUp { get; init; }
        public int Reachable { get; init; }
        public long KernelDrops { get; init; }
        public long FramesRejected { get; init; }
        public required IReadOnlyList<TestbedLinkReport> Links { get; init; }
    }

    private sealed record TestbedLinkReport
    {
        public required string Port { get; init; }
        public string? Interface { get; init; }
        public required string Neighbour { get; init; }
        public bool Up { get; init; }
        public bool Carrier { get; init; }
        public bool Heard { get; init; }
    }
}
