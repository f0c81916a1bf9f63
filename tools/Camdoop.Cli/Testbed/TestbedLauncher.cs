using System.Diagnostics;
using System.Globalization;
using System.Text;
using Camdoop.Cli.CommandLine;
using Camdoop.Hosting;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Testbed;

/// <summary>Options of `testbed up` beyond the network itself.</summary>
public sealed record TestbedNodeOptions
{
    public int FrontEndPort { get; init; } = 7070;

    /// <summary>The live web view's port on every server (0: none); on by default on a testbed, which is this host's own.</summary>
    public int WebPort { get; init; } = 7080;

    /// <summary>
    /// Liveness beacons every 100 ms, a link down after 10 misses (1 s): tolerant of dozens of node processes sharing
    /// a couple of cores, and cheap while idle (every beacon wakes two threads on each side).
    /// </summary>
    public double BeaconIntervalMs { get; init; } = 100;

    public int BeaconMisses { get; init; } = 30;

    public int StatusIntervalMs { get; init; } = 1000;

    public int CarrierPollMs { get; init; } = 250;

    /// <summary>Seconds a server must be unreachable before its replicas are made again (<see cref="NodeConfig.ReReplicateAfterSeconds"/>).</summary>
    public double ReReplicateAfterSeconds { get; init; } = 600;

    /// <summary>Bytes a second each server sends to make replicas again (<see cref="NodeConfig.ReReplicateBytesPerSecond"/>; 0: no cap).</summary>
    public long ReReplicateBytesPerSecond { get; init; } = 50L << 20;

    public string LogLevel { get; init; } = "info";

    /// <summary>Nodes warm their job code paths up before they start (<see cref="NodeConfig.WarmUp"/>).</summary>
    public bool WarmUp { get; init; } = true;

    /// <summary>Which driver every node's links use.</summary>
    public LinkDriver LinkDriver { get; init; } = LinkDrivers.Default;

    /// <summary>Per-server overrides of the kernel receive buffer (tests provoke drops with a tiny one).</summary>
    public IReadOnlyDictionary<Coordinate, int> ReceiveBufferBytes { get; init; } = new Dictionary<Coordinate, int>();

    /// <summary>Every node's scrub interval in seconds (<see cref="NodeConfig.ScrubIntervalSeconds"/>); null: the node's default.</summary>
    public int? ScrubIntervalSeconds { get; init; }
}

/// <summary>
/// Starts and stops the node processes of an emulated testbed: writes one node config per server, launches
/// `camdoop node` inside each server's namespace (detached, in its own session, output to a file in its data
/// directory), waits until every server hears its six neighbours, and stops them with SIGTERM.
/// </summary>
public static class TestbedLauncher
{
    /// <summary>Writes the configs and launches every node; returns the state to save.</summary>
    public static TestbedState Launch(TestbedLayout layout, string dataRoot, string? linkRate, TestbedNodeOptions options)
    {
        var torus = layout.Torus;
        TestbedDataRoot.CreateDirectory(dataRoot);
        string clientCerts = TestbedCredentials.Create(layout, dataRoot);
        // One job assembly directory for the whole testbed, as if the operator installed a job on every server.
        string jobAssemblies = Path.GetFullPath(Path.Combine(dataRoot, TestbedState.JobAssembliesFolder));
        TestbedDataRoot.CreateDirectory(jobAssemblies);
        var command = NodeCommandLine();
        var servers = new List<TestbedServer>(torus.Count);
        foreach (var c in torus.All())
        {
            string dir = Path.Combine(dataRoot, string.Create(CultureInfo.InvariantCulture, $"{c.X}-{c.Y}-{c.Z}"));
            TestbedDataRoot.CreateDirectory(dir);
            var config = new NodeConfig
            {
                Coordinate = c.Name,
                Torus = torus.ToString(),
                Ports = Ports.All.ToArray().ToDictionary(p => p.Name(), TestbedLayout.PortInterface),
                DataDirectory = dir,
                UplinkAddress = layout.ServerAddress(c),
                FrontEndPort = options.FrontEndPort,
                StreamPort = TestbedLayout.StreamPort,
                PeerAddresses = torus.All().ToDictionary(p => p.Name, layout.ServerAddress),
                WebPort = options.WebPort,
                CertsDirectory = TestbedCredentials.NodeDirectory(dir),
                LogFile = Path.Combine(dir, "node.log"),
                LogLevel = options.LogLevel,
                BeaconIntervalMs = options.BeaconIntervalMs,
                BeaconMisses = options.BeaconMisses,
                StatusIntervalMs = options.StatusIntervalMs,
                CarrierPollMs = options.CarrierPollMs,
                ReReplicateAfterSeconds = options.ReReplicateAfterSeconds,
                ReReplicateBytesPerSecond = options.ReReplicateBytesPerSecond,
                ReceiveBufferBytes = options.ReceiveBufferBytes.TryGetValue(c, out int rcv) ? rcv : null,
                LinkDriver = options.LinkDriver.Name(),
                JobAssemblyDirectory = jobAssemblies,
                WarmUp = options.WarmUp,
                ScrubIntervalSeconds = options.ScrubIntervalSeconds ?? new NodeConfig().ScrubIntervalSeconds,
            };
            string configPath = Path.Combine(dir, "node.json");
            config.Save(configPath);
            if (!OperatingSystem.IsWindows())
            {
                File.SetUnixFileMode(configPath, UnixFileMode.UserRead | UnixFileMode.UserWrite);
            }
            // A stale status from an earlier run must not count as "up".
            File.Delete(Path.Combine(dir, "status.json"));
            servers.Add(new TestbedServer
            {
                Coordinate = config.Coordinate,
                Namespace = layout.ServerNamespace(c),
                Address = layout.ServerAddress(c),
                Config = configPath,
                DataDirectory = dir,
            });
        }
        for (int i = 0; i < servers.Count; i++)
        {
            servers[i] = servers[i] with { Pid = StartDetached(servers[i], command) };
        }
        var first = torus.CoordinateOf(0);
        return new TestbedState
        {
            Prefix = layout.Prefix,
            Subnet = layout.Subnet,
            Torus = torus.ToString(),
            DataRoot = Path.GetFullPath(dataRoot),
            FrontEnd = $"{layout.ServerAddress(first)}:{options.FrontEndPort}",
            FrontEndPort = options.FrontEndPort,
            WebPort = options.WebPort,
            ClientCerts = clientCerts,
            LinkRate = linkRate,
            LinkDriver = options.LinkDriver.Name(),
            JobAssemblyDirectory = jobAssemblies,
            CreatedUtc = DateTime.UtcNow,
            Servers = servers,
        };
    }

    /// <summary>
    /// Waits until every server reports all six links up and the whole torus reachable; reports progress as the
    /// number of servers up. Throws with the servers and links still missing on timeout or when a node died.
    /// </summary>
    public static void WaitUntilUp(TestbedState state, TimeSpan timeout, Action<int, int>? progress = null) =>
        WaitUntilUp(state, state.Servers, timeout, progress);

    /// <summary>As above, for some of the testbed's servers (one that was started again).</summary>
    public static void WaitUntilUp(TestbedState state, IReadOnlyList<TestbedServer> servers, TimeSpan timeout, Action<int, int>? progress = null)
    {
        int n = state.Servers.Count;
        var clock = Stopwatch.StartNew();
        while (true)
        {
            int up = 0;
            var missing = new List<string>();
            foreach (var server in servers)
            {
                var status = NodeStatus.TryRead(server.StatusPath);
                if (status is { State: "running", LinksUp: Ports.Count } && status.ReachableServers == n)
                {
                    up++;
                    continue;
                }
                if (!IsAlive(server.Pid) && status?.State != "running")
                {
                    throw new CliException($"node {server.Coordinate} (pid {server.Pid}) exited during startup: {LastLines(server.OutputPath)}");
                }
                missing.Add(status is null
                    ? $"{server.Coordinate} (no status yet)"
                    : $"{server.Coordinate} (links up {status.LinksUp}/6: down {string.Join(' ', status.Links.Where(l => !l.Up).Select(l => l.Port))}; reaches {status.ReachableServers}/{n})");
            }
            progress?.Invoke(up, servers.Count);
            if (up == servers.Count)
            {
                return;
            }
            if (clock.Elapsed > timeout)
            {
                throw new CliException($"testbed not up after {timeout.TotalSeconds:0} s: {missing.Count} servers not ready: {string.Join("; ", missing.Take(5))}{(missing.Count > 5 ? "; ..." : "")}");
            }
            Thread.Sleep(200);
        }
    }

    /// <summary>Starts a stopped server's node again on its config and data directory; returns its pid.</summary>
    public static int Restart(TestbedServer server)
    {
        // Its last status says "running" (a killed node never says otherwise): it must not count as up.
        File.Delete(server.StatusPath);
        return StartDetached(server, NodeCommandLine());
    }

    /// <summary>Sends SIGTERM to every node and waits for them to exit (a node that hangs is killed later with its namespace).</summary>
    public static void StopNodes(IEnumerable<TestbedServer> servers, TimeSpan timeout)
    {
        var nodes = servers.Select(s => s.Pid).Where(pid => pid > 0 && IsAlive(pid) && IsOurNode(pid)).ToList();
        SignalAndWait(nodes, "TERM", timeout);
    }

    /// <summary>SIGKILLs a node process (a crash: nothing runs on its way out); false when the pid is not a node.</summary>
    public static bool Kill(int pid)
    {
        if (!IsOurNode(pid))
        {
            return false;
        }
        SignalAndWait([pid], "KILL", TimeSpan.FromSeconds(5));
        return true;
    }

    /// <summary>Sends <paramref name="signal"/> (TERM, KILL) to the processes and waits up to <paramref name="timeout"/> for them to exit.</summary>
    internal static void SignalAndWait(IReadOnlyList<int> pids, string signal, TimeSpan timeout)
    {
        if (pids.Count == 0)
        {
            return;
        }
        SystemCommand.Run("kill", [$"-{signal}", .. pids.Select(p => p.ToString(CultureInfo.InvariantCulture))], allowFailure: true);
        var clock = Stopwatch.StartNew();
        while (pids.Any(IsAlive) && clock.Elapsed < timeout)
        {
            Thread.Sleep(20);
        }
    }

    public static bool IsAlive(int pid)
    {
        if (pid <= 0 || !Directory.Exists($"/proc/{pid}"))
        {
            return false;
        }
        try
        {
            // A zombie (exited, not yet reaped by its parent) is not alive.
            var stat = File.ReadAllText($"/proc/{pid}/stat");
            int close = stat.LastIndexOf(')');
            return close < 0 || close + 2 >= stat.Length || stat[close + 2] != 'Z';
        }
        catch (IOException)
        {
            return false;
        }
    }

    /// <summary>Whether the process looks like a `camdoop node` (guards against a recycled pid).</summary>
    private static bool IsOurNode(int pid)
    {
        try
        {
            var cmdline = File.ReadAllText($"/proc/{pid}/cmdline").Replace('\0', ' ');
            return cmdline.Contains(" node ", StringComparison.Ordinal) && cmdline.Contains("--config", StringComparison.Ordinal);
        }
        catch (IOException)
        {
            return false;
        }
    }

    /// <summary>
    /// The command that runs this very CLI: the apphost next to camdoop.dll when there is one, else the dotnet host
    /// running camdoop.dll.
    /// </summary>
    public static IReadOnlyList<string> NodeCommandLine()
    {
        string dir = AppContext.BaseDirectory;
        string dll = Path.Combine(dir, "camdoop.dll");
        if (!File.Exists(dll))
        {
            dll = typeof(TestbedLauncher).Assembly.Location;
            dir = Path.GetDirectoryName(dll)!;
        }
        string apphost = Path.Combine(dir, "camdoop");
        if (!OperatingSystem.IsWindows() && File.Exists(apphost) && (File.GetUnixFileMode(apphost) & UnixFileMode.UserExecute) != 0)
        {
            return [apphost];
        }
        string? host = Environment.GetEnvironmentVariable("DOTNET_HOST_PATH");
        if (host is null || !File.Exists(host))
        {
            host = Environment.ProcessPath is { } p && Path.GetFileNameWithoutExtension(p) == "dotnet" ? p : "dotnet";
        }
        return [host, dll];
    }

    private static int StartDetached(TestbedServer server, IReadOnlyList<string> command)
    {
        // sh backgrounds the node in its own session (setsid), so it outlives this CLI and never holds our
        // terminal or pipes; `ip netns exec` and setsid exec in place, so $! is the node's own pid. Nodes share
        // one machine, so their Server GC adapts its heaps to their size (DATAS), which the CLI turns off for the
        // simulator's one big process (Camdoop.Cli.csproj). Nodes also run without tiered PGO: a ReadyToRun build's hot
        // methods then go straight to optimized code instead of through an instrumented tier first, which on a
        // 3x3x3 testbed cost a first and a second job several CPU seconds across the 27 processes, for no steady-state
        // gain (docs/performance.md). A value set by the caller wins.
        // The node must not keep descriptors the caller left open: a `flock LOCKFILE camdoop testbed up` would
        // otherwise leave the lock held by the nodes until they stop, and a later `flock LOCKFILE testbed down` waits forever.
        // umask 077: every file a node writes (chunks, logs, status), and its output file, is root's alone.
        var script = new StringBuilder("exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-; umask 077; DOTNET_GCDynamicAdaptationMode=\"${DOTNET_GCDynamicAdaptationMode:-1}\" DOTNET_TieredPGO=\"${DOTNET_TieredPGO:-0}\" setsid ip netns exec ")
            .Append(Quote(server.Namespace));
        foreach (var part in command)
        {
            script.Append(' ').Append(Quote(part));
        }
        script.Append(" node --config ").Append(Quote(server.Config))
            .Append(" </dev/null >").Append(Quote(server.OutputPath)).Append(" 2>&1 & echo $!");
        var output = SystemCommand.Run("/bin/sh", ["-c", script.ToString()]);
        return int.TryParse(output.Trim(), NumberStyles.Integer, CultureInfo.InvariantCulture, out int pid)
            ? pid
            : throw new CliException($"could not start the node of {server.Coordinate}: {output.Trim()}");
    }

    private static string Quote(string text) => "'" + text.Replace("'", "'\\''", StringComparison.Ordinal) + "'";

    private static string LastLines(string path)
    {
        try
        {
            var lines = File.ReadAllLines(path).Where(l => l.Length > 0).TakeLast(3);
            return string.Join(" | ", lines) is { Length: > 0 } text ? text : "(no output)";
        }
        catch (IOException)
        {
            return "(no output)";
        }
    }
}
