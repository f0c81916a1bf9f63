using System.Diagnostics;
using System.Text.Json;
using Camdoop.Cli.Testbed;
using Camdoop.Cli.Tests.Support;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.Hosting;

namespace Camdoop.Cli.Tests.Testbed;

[Collection(TestbedCollection.Name)]
public class TestbedLifecycleTests
{
    [RootFact]
    public void UpStatusStopOneNodeAndDownLeaveNothingBehind()
    {
        const string prefix = "cdtl";
        try
        {
            var up = CliRunner.Run("testbed", "up", "--torus", "2x2x3", "--prefix", prefix, "--subnet", "203", "--no-warm-up", "--json");
            Assert.True(up.ExitCode == 0, up.ToString());
            using var upJson = JsonDocument.Parse(up.Stdout);
            string frontEnd = upJson.RootElement.GetProperty("frontend").GetString()!;
            Assert.Equal("10.203.0.1:7070", frontEnd);

            var status = CliRunner.Run("testbed", "status", "--prefix", prefix, "--json");
            Assert.True(status.ExitCode == 0, status.ToString());
            using var statusJson = JsonDocument.Parse(status.Stdout);
            Assert.Equal(frontEnd, statusJson.RootElement.GetProperty("frontend").GetString());
            var servers = statusJson.RootElement.GetProperty("servers").EnumerateArray().ToList();
            Assert.Equal(12, servers.Count);
            Assert.All(servers, s =>
            {
                Assert.Equal("running", s.GetProperty("state").GetString());
                Assert.Equal(6, s.GetProperty("linksUp").GetInt32());
                Assert.Equal(12, s.GetProperty("reachable").GetInt32());
                Assert.All(s.GetProperty("links").EnumerateArray(), l => Assert.True(l.GetProperty("heard").GetBoolean()));
            });

            // The front-end answers from outside the cube (this host, over the switch network).
            using (var client = FrontEndClient.Connect(frontEnd, Camdoop.Runtime.Security.ClusterCredentials.Load(TestbedState.TryLoad(prefix)!.ClientCerts!, Camdoop.Runtime.Security.CertificateRole.Client)))
            {
                var hello = client.Call(new HelloRequest());
                Assert.Equal("2x2x3", hello.Torus);
                Assert.Equal(12, hello.Reachable);
                var node = client.Call(new StatusRequest()).Status;
                Assert.Equal("0,0,0", node.GetProperty("coordinate").GetString());
                Assert.Equal(6, node.GetProperty("linksUp").GetInt64());
            }

            // The data root is root's alone (the nodes run as root and load code from it): 0700 directories, 0600 files.
            var state = TestbedState.TryLoad(prefix)!;
            Assert.Equal(TestbedDataRoot.Default(prefix), state.DataRoot);
            AssertPrivateToRoot(state.DataRoot);

            // SIGTERM stops one node cleanly: it records "stopped" and its neighbours see the link go down.
            var victim = state.Servers.Single(s => s.Coordinate == "1,1,2");
            var neighbour = state.Servers.Single(s => s.Coordinate == "0,1,2");
            Process.Start("kill", ["-TERM", victim.Pid.ToString(System.Globalization.CultureInfo.InvariantCulture)]).WaitForExit();
            WaitFor(() => !TestbedLauncher.IsAlive(victim.Pid), TimeSpan.FromSeconds(10), "the stopped node to exit");
            Assert.Equal("stopped", NodeStatus.TryRead(victim.StatusPath)!.State);
            Assert.Contains("stopped", File.ReadAllText(Path.Combine(victim.DataDirectory, "node.log")), StringComparison.Ordinal);
            WaitFor(
                () => NodeStatus.TryRead(neighbour.StatusPath) is { } n && n.Links.Where(l => l.Neighbour == "1,1,2").All(l => !l.Up) && n.ReachableServers == 11,
                TimeSpan.FromSeconds(10),
                "the neighbour to see its links to the stopped node down");

            // The stopped node and its four neighbours (two of them over both links of a 2-wide ring) are unhealthy
            // (status files are rewritten every second, so give every neighbour time to notice).
            CliResult? notHealthy = null;
            WaitFor(
                () => (notHealthy = CliRunner.Run("testbed", "status", "--prefix", prefix)).Stdout.Contains("7/12 servers running with all six links up", StringComparison.Ordinal),
                TimeSpan.FromSeconds(10),
                "testbed status to report the stopped node and its neighbours");
            Assert.Equal(1, notHealthy!.ExitCode);

            var down = CliRunner.Run("testbed", "down", "--prefix", prefix);
            Assert.True(down.ExitCode == 0, down.ToString());
            Assert.Contains("13 namespaces removed", down.Stdout, StringComparison.Ordinal);
            AssertNothingLeft(prefix, state);

            var again = CliRunner.Run("testbed", "down", "--prefix", prefix);
            Assert.Equal(0, again.ExitCode);
            Assert.Contains("nothing to remove", again.Stdout, StringComparison.Ordinal);
        }
        finally
        {
            CliRunner.Run("testbed", "down", "--prefix", prefix);
        }
    }

    /// <summary>
    /// A data root that another user owns, or a link, could let that user replace what the nodes (root) run: refused
    /// in one line, before anything is made, and left as it was.
    /// </summary>
    [RootFact]
    public void ADataRootNotRootsOrALinkIsRefusedInOneLine()
    {
        string work = Path.Combine(Path.GetTempPath(), $"camdoop-dataroot-{Environment.ProcessId}");
        Directory.CreateDirectory(work);
        try
        {
            string foreign = Path.Combine(work, "foreign");
            Directory.CreateDirectory(foreign);
            File.WriteAllText(Path.Combine(foreign, "keep"), "theirs");
            SystemCommand.Run("chown", ["-R", "65534:65534", foreign]);
            string link = Path.Combine(work, "link");
            Directory.CreateSymbolicLink(link, Path.Combine(work, "elsewhere"));
            foreach (var (root, reason) in new[] { (foreign, "belongs to uid 65534, not root: refused"), (link, "is a symbolic link, not a directory: refused") })
            {
                var up = CliRunner.Run("testbed", "up", "--torus", "2x2x2", "--prefix", "cdtr", "--subnet", "209", "--data-root", root, "--no-warm-up");
                OneLineError.Assert(up, reason);
                Assert.DoesNotContain(ip("netns", "list"), l => l.StartsWith("cdtr-", StringComparison.Ordinal));
            }
            Assert.Equal("theirs", File.ReadAllText(Path.Combine(foreign, "keep")));
            Assert.NotNull(new DirectoryInfo(link).LinkTarget);
        }
        finally
        {
            CliRunner.Run("testbed", "down", "--prefix", "cdtr");
            Directory.Delete(work, recursive: true);
        }

        static string[] ip(params string[] args) => SystemCommand.Run("ip", args).Split('\n', StringSplitOptions.RemoveEmptyEntries);
    }

    private static void AssertPrivateToRoot(string dataRoot)
    {
        string[] entries = SystemCommand.Run("find", [dataRoot, "-printf", "%u %m %y %p\\n"]).Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Contains(entries, e => e.EndsWith("/node.json", StringComparison.Ordinal));
        Assert.Contains(entries, e => e.EndsWith("/node.log", StringComparison.Ordinal));
        Assert.All(entries, e =>
        {
            string[] f = e.Split(' ', 4);
            Assert.True(f[0] == "root" && (f[2] == "d" ? f[1] == "700" : f[1] == "600"), $"not private to root: {e}");
        });
    }

    [RootFact]
    public void DownCleansUpAfterACrashedUp()
    {
        // A crash of `up` after the network and the processes exist but before the state file was written.
        const string prefix = "cdtc";
        var layout = new TestbedLayout(prefix, Runtime.Topology.Torus.Parse("2x2x2"), subnet: 204);
        string dataRoot = Path.Combine(Path.GetTempPath(), "camdoop-crash-" + Environment.ProcessId);
        try
        {
            TestbedNetwork.Create(layout, new LinkShaping(null, 0, 0));
            var state = TestbedLauncher.Launch(layout, dataRoot, null, new TestbedNodeOptions());
            TestbedLauncher.WaitUntilUp(state, TimeSpan.FromSeconds(120));
            Assert.Null(TestbedState.TryLoad(prefix));

            var down = CliRunner.Run("testbed", "down", "--prefix", prefix);
            Assert.True(down.ExitCode == 0, down.ToString());
            AssertNothingLeft(prefix, state);
        }
        finally
        {
            TestbedNetwork.Destroy(layout);
            if (Directory.Exists(dataRoot))
            {
                Directory.Delete(dataRoot, recursive: true);
            }
        }
    }

    [RootFact]
    public void WithoutRootUpAndDownExplainInOneLine()
    {
        foreach (var verb in new[] { "up", "down" })
        {
            var result = CliRunner.RunAs(65534, TimeSpan.FromMinutes(1), "testbed", verb, "--prefix", "cdtn");
            Assert.NotEqual(0, result.ExitCode);
            var lines = result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
            Assert.Single(lines);
            Assert.Contains("needs root", lines[0], StringComparison.Ordinal);
        }
    }

    [RootFact]
    public void LinkLossNeedsNetemAndSaysSoInOneLineWhenTheKernelLacksIt()
    {
        var result = CliRunner.Run("testbed", "up", "--torus", "2x2x2", "--prefix", "cdtq", "--subnet", "208", "--link-loss", "1", "--no-warm-up");
        if (TestbedNetwork.NetemAvailable())
        {
            // A kernel with netem: every link drops 1% of its frames.
            try
            {
                Assert.True(result.ExitCode == 0, result.ToString());
                var qdiscs = SystemCommand.Run("ip", ["netns", "exec", "cdtq-0-0-0", "tc", "qdisc", "show"]);
                Assert.Contains("loss 1%", qdiscs, StringComparison.Ordinal);
            }
            finally
            {
                CliRunner.Run("testbed", "down", "--prefix", "cdtq");
            }
            return;
        }
        Assert.NotEqual(0, result.ExitCode);
        var lines = result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Single(lines);
        Assert.Contains("sch_netem", lines[0], StringComparison.Ordinal);
        Assert.DoesNotContain(TestbedNetwork.ListNamespaces(), ns => ns.StartsWith("cdtq-", StringComparison.Ordinal));
    }

    private static void AssertNothingLeft(string prefix, TestbedState state)
    {
        Assert.DoesNotContain(TestbedNetwork.ListNamespaces(), ns => ns.StartsWith(prefix + "-", StringComparison.Ordinal));
        Assert.DoesNotContain($"{prefix}host", SystemCommand.Ip("-o", "link", "show"), StringComparison.Ordinal);
        Assert.Null(TestbedState.TryLoad(prefix));
        Assert.False(Directory.Exists(TestbedState.ClientCertsPathFor(prefix)), "the testbed's client credentials outlived it");
        Assert.All(state.Servers, s => Assert.False(TestbedLauncher.IsAlive(s.Pid), $"node {s.Coordinate} (pid {s.Pid}) still runs"));
    }

    private static void WaitFor(Func<bool> condition, TimeSpan timeout, string what)
    {
        var clock = Stopwatch.StartNew();
        while (!condition())
        {
            if (clock.Elapsed > timeout)
            {
                Assert.Fail($"timed out after {timeout.TotalSeconds:0} s waiting for {what}");
            }
            Thread.Sleep(100);
        }
    }
}
