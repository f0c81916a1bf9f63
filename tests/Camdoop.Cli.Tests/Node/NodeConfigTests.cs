using Camdoop.Cli.Tests.Support;
using Camdoop.Hosting;
using Camdoop.Hosting.Logging;
using Camdoop.Runtime.Links.RawEthernet;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Tests.Node;

public class NodeConfigTests
{
    private static NodeConfig Valid => new()
    {
        Coordinate = "1,2,0",
        Torus = "3x3x3",
        Ports = new Dictionary<string, string> { ["+X"] = "eth1", ["-z"] = "eth6" },
        DataDirectory = "/tmp/x",
        UplinkAddress = "10.0.0.5",
        FrontEndPort = 7070,
        CertsDirectory = "/tmp/x/certs",
    };

    [Fact]
    public void AValidConfigResolvesPortsAddressesAndTunables()
    {
        var s = (Valid with { BeaconIntervalMs = 100, BeaconMisses = 10 }).Validate();
        Assert.Equal(new Coordinate(1, 2, 0), s.Self);
        Assert.Equal(new Torus(3, 3, 3), s.Torus);
        Assert.Equal("eth1", s.Interfaces[(int)Port.XPlus]);
        Assert.Equal("eth6", s.Interfaces[(int)Port.ZMinus]);
        Assert.Null(s.Interfaces[(int)Port.YPlus]);
        Assert.Equal("10.0.0.5", s.UplinkAddress!.ToString());
        Assert.Equal(100_000_000, s.Node.BeaconInterval);
        Assert.Equal(10, s.Node.BeaconMisses);
        Assert.Equal("/tmp/x/node.log", s.LogFile);
        Assert.Equal("/tmp/x", s.Node.DataDirectory);
        Assert.Null(s.JobAssemblyDirectory); // built-in jobs only unless the operator allows a directory
        Assert.Equal("/opt/jobs", (Valid with { JobAssemblyDirectory = "/opt/jobs/" }).Validate().JobAssemblyDirectory!.TrimEnd('/'));
    }

    [Fact]
    public void TheLogFormatIsTextUnlessJsonAndADashLogFileIsStderr()
    {
        var defaults = Valid.Validate();
        Assert.Equal(NodeLogFormat.Text, defaults.LogFormat);
        Assert.Equal("/tmp/x/node.log", defaults.LogFile);
        var json = (Valid with { LogFormat = "JSON", LogFile = "-" }).Validate();
        Assert.Equal(NodeLogFormat.Json, json.LogFormat);
        Assert.Equal(NodeLogging.StandardError, json.LogFile);
    }

    [Fact]
    public void TheScrubbersIntervalAndRateReachTheChunkStore()
    {
        var defaults = Valid.Validate().ChunkStore;
        Assert.Equal(24L * 3600 * 1_000_000_000, defaults.ScrubInterval); // a pass a day
        Assert.Equal(20_000_000, defaults.ScrubBytesPerSecond);
        var set = (Valid with { ScrubIntervalSeconds = 90, ScrubBytesPerSecond = 5_000_000 }).Validate().ChunkStore;
        Assert.Equal(90L * 1_000_000_000, set.ScrubInterval);
        Assert.Equal(5_000_000, set.ScrubBytesPerSecond);
        Assert.Equal(0, (Valid with { ScrubIntervalSeconds = 0 }).Validate().ChunkStore.ScrubInterval); // no scrubbing
    }

    [Theory]
    [InlineData("coordinate", "must be a server of the 3x3x3 torus")]
    [InlineData("torus", "every dimension must be an integer")]
    [InlineData("port", "port '+W' is not one of")]
    [InlineData("uplink", "'uplinkAddress' 'nowhere' is not an IP address")]
    [InlineData("beacon", "'beaconIntervalMs' must be between")]
    [InlineData("data", "'dataDirectory' is missing")]
    [InlineData("driver", "'linkDriver' 'dpdk' is not pcap or afpacket")]
    [InlineData("key", "'certsDirectory' is missing: the front-end and the streams take only TLS connections under the cluster CA")]
    [InlineData("handshake", "'frontEndHandshakeTimeoutMs' must be between 100 and 600000")]
    [InlineData("requests", "'frontEndMaxRequestsInFlight' must be between 1 and 65536")]
    [InlineData("bytes", "'frontEndMaxBytesInFlight' must be at least 33554432")]
    [InlineData("held", "'frontEndMaxBytesHeld' must be at least 'frontEndMaxBytesInFlight' (268435456), so that the chunk one connection may upload fits")]
    [InlineData("queries", "'frontEndMaxQueries' must be between 1 and 64 (the front-end's connections)")]
    [InlineData("perClient", "'frontEndMaxQueriesPerClient' must be between 1 and 'frontEndMaxQueries' (32)")]
    [InlineData("jobs", "'jobAssemblyDirectory' 'jobs' must be an absolute path")]
    [InlineData("scrubInterval", "'scrubIntervalSeconds' must be between 0 (no scrubbing) and 31536000")]
    [InlineData("scrubRate", "'scrubBytesPerSecond' must be between 1000 and 100000000000")]
    [InlineData("logFormat", "'logFormat' 'xml' is not text or json")]
    public void BadFieldsAreNamedInOneLine(string field, string expected)
    {
        var config = field switch
        {
            "coordinate" => Valid with { Coordinate = "3,0,0" },
            "torus" => Valid with { Torus = "3x1x3" },
            "port" => Valid with { Ports = new Dictionary<string, string> { ["+W"] = "eth0" } },
            "uplink" => Valid with { UplinkAddress = "nowhere" },
            "beacon" => Valid with { BeaconIntervalMs = 0 },
            "driver" => Valid with { LinkDriver = "dpdk" },
            "key" => Valid with { CertsDirectory = null },
            "handshake" => Valid with { FrontEndHandshakeTimeoutMs = 0 },
            "requests" => Valid with { FrontEndMaxRequestsInFlight = 0 },
            "bytes" => Valid with { FrontEndMaxBytesInFlight = 1 << 20 },
            "held" => Valid with { FrontEndMaxBytesHeld = 128L << 20 },
            "queries" => Valid with { FrontEndMaxQueries = 65 },
            "perClient" => Valid with { FrontEndMaxQueriesPerClient = 33 },
            "jobs" => Valid with { JobAssemblyDirectory = "jobs" },
            "scrubInterval" => Valid with { ScrubIntervalSeconds = -1 },
            "scrubRate" => Valid with { ScrubBytesPerSecond = 999 },
            "logFormat" => Valid with { LogFormat = "xml" },
            _ => Valid with { DataDirectory = null },
        };
        var e = Assert.Throws<NodeConfigException>(config.Validate);
        Assert.Contains(expected, e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', e.Message);
    }

    [Fact]
    public void TheCredentialsDirectoryAndTheFrontEndsLimitsReachTheSettings()
    {
        var s = (Valid with
        {
            CertsDirectory = "certs",
            FrontEndHandshakeTimeoutMs = 2500,
            FrontEndMaxRequestsInFlight = 3,
            FrontEndMaxBytesInFlight = 64L << 20,
            FrontEndMaxBytesHeld = 64L << 20,
            FrontEndMaxQueries = 5,
            FrontEndMaxQueriesPerClient = 5,
        }).Validate();
        Assert.Equal(Path.GetFullPath("certs"), s.CertsDirectory);
        Assert.Equal(TimeSpan.FromMilliseconds(2500), s.FrontEnd.HandshakeTimeout);
        Assert.Equal(3, s.FrontEnd.MaxRequestsInFlight);
        Assert.Equal(64L << 20, s.FrontEnd.MaxBytesInFlight);
        Assert.Equal(64L << 20, s.FrontEnd.MaxBytesHeld);
        Assert.Equal(5, s.FrontEnd.MaxQueries);
        Assert.Equal(5, s.FrontEnd.MaxQueriesPerClient);
        var defaults = Valid.Validate().FrontEnd;
        Assert.Equal(TimeSpan.FromSeconds(10), defaults.HandshakeTimeout);
        Assert.Equal(16, defaults.MaxRequestsInFlight);
        Assert.Equal(256L << 20, defaults.MaxBytesInFlight);
        Assert.Equal(1L << 30, defaults.MaxBytesHeld);
        Assert.Equal(32, defaults.MaxQueries);
        Assert.Equal(4, defaults.MaxQueriesPerClient);
        // A server off the switch runs no front-end and no streams, and needs no certificate.
        Assert.Null((Valid with { FrontEndPort = 0, CertsDirectory = null }).Validate().CertsDirectory);
    }

    [Fact]
    public void ANodeWhoseCredentialsAreMissingOrBadDoesNotStartAndSaysWhyInOneLine()
    {
        string dir = Path.Combine(Path.GetTempPath(), $"camdoop-nodecerts-{Environment.ProcessId}");
        Directory.CreateDirectory(dir);
        try
        {
            // No ports: the node needs no privilege and gets as far as its front-end.
            var config = Valid with { DataDirectory = dir, Ports = [], UplinkAddress = "127.0.0.1", FrontEndPort = 0 };
            string path = Path.Combine(dir, "node.json");
            string certs = Path.Combine(dir, "certs");
            (config with { FrontEndPort = FreePort(), CertsDirectory = certs }).Save(path);
            var missing = CliRunner.Run("node", "--config", path);
            Assert.Equal(1, missing.ExitCode);
            Assert.Equal($"camdoop: node 1,2,0: cannot use the server's credentials: credentials directory {certs} does not exist", missing.Stderr.Trim());

            // Another server's certificate: refused, naming both.
            string ca = Path.Combine(dir, "ca");
            Assert.Equal(0, CliRunner.Run("certs", "init", "--ca-dir", ca).ExitCode);
            Assert.Equal(0, CliRunner.Run("certs", "node", "--ca-dir", ca, "--server", "0,0,0", "--address", "127.0.0.1", "--out", certs).ExitCode);
            var other = CliRunner.Run("node", "--config", path);
            Assert.Equal(1, other.ExitCode);
            Assert.Equal($"camdoop: node 1,2,0: the node certificate in {certs} is server 0,0,0's, not 1,2,0's", other.Stderr.Trim());

            // A damaged key: one line naming the file.
            File.WriteAllText(Path.Combine(certs, "node.key"), "-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n");
            var damaged = CliRunner.Run("node", "--config", path);
            Assert.Equal(1, damaged.ExitCode);
            Assert.Contains($"cannot read certificate {Path.Combine(certs, "node.crt")} with key {Path.Combine(certs, "node.key")}", damaged.Stderr, StringComparison.Ordinal);
            Assert.Single(damaged.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    private static int FreePort()
    {
        var probe = new System.Net.Sockets.TcpListener(System.Net.IPAddress.Loopback, 0);
        probe.Start();
        int port = ((System.Net.IPEndPoint)probe.LocalEndpoint).Port;
        probe.Stop();
        return port;
    }

    [Fact]
    public void TheLinkDriverIsAfPacketUnlessTheConfigNamesPcap()
    {
        Assert.Equal(LinkDriver.AfPacket, Valid.Validate().LinkDriver);
        Assert.Equal(LinkDriver.Pcap, (Valid with { LinkDriver = "pcap" }).Validate().LinkDriver);
        Assert.Equal(LinkDriver.AfPacket, (Valid with { LinkDriver = "AfPacket" }).Validate().LinkDriver);
    }

    [Fact]
    public void TheNodeCommandFailsInOneLineOnABadConfigOrAMissingInterface()
    {
        string dir = Path.Combine(Path.GetTempPath(), $"camdoop-nodecfg-{Environment.ProcessId}");
        Directory.CreateDirectory(dir);
        try
        {
            string missing = Path.Combine(dir, "absent.json");
            var noFile = CliRunner.Run("node", "--config", missing);
            Assert.Equal(1, noFile.ExitCode);
            Assert.Contains("cannot read node config", noFile.Stderr, StringComparison.Ordinal);

            string bad = Path.Combine(dir, "bad.json");
            File.WriteAllText(bad, "{ \"torus\": ");
            var badJson = CliRunner.Run("node", "--config", bad);
            Assert.Equal(1, badJson.ExitCode);
            Assert.Contains("is not valid JSON", badJson.Stderr, StringComparison.Ordinal);

            string noNic = Path.Combine(dir, "nonic.json");
            (Valid with { DataDirectory = dir, Ports = new Dictionary<string, string> { ["+X"] = "cdnone0" }, FrontEndPort = 0 }).Save(noNic);
            var result = CliRunner.Run("node", "--config", noNic);
            Assert.Equal(1, result.ExitCode);
            var lines = result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
            Assert.Single(lines);
            // As root the interface is missing; without CAP_NET_RAW the socket cannot even be opened.
            Assert.Matches("port \\+X: (network interface cdnone0 does not exist|opening a raw Ethernet socket on cdnone0 needs root)", lines[0]);

            // The same through libpcap: the interface is looked up before anything needs a privilege.
            (Valid with { DataDirectory = dir, Ports = new Dictionary<string, string> { ["+X"] = "cdnone0" }, FrontEndPort = 0, LinkDriver = "pcap" }).Save(noNic);
            var pcap = CliRunner.Run("node", "--config", noNic);
            Assert.Equal(1, pcap.ExitCode);
            var pcapLines = pcap.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
            Assert.Single(pcapLines);
            Assert.Matches("port \\+X: (network interface cdnone0 does not exist|libpcap not found: apt-get install libpcap0.8)", pcapLines[0]);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }
}
