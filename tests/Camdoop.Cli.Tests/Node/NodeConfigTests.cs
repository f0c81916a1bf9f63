using Camdoop.Cli.Tests.Support;
using Camdoop.Hosting;
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

    [Theory]
    [InlineData("coordinate", "must be a server of the 3x3x3 torus")]
    [InlineData("torus", "every dimension must be an integer")]
    [InlineData("port", "port '+W' is not one of")]
    [InlineData("uplink", "'uplinkAddress' 'nowhere' is not an IP address")]
    [InlineData("beacon", "'beaconIntervalMs' must be between")]
    [InlineData("data", "'dataDirectory' is missing")]
    [InlineData("driver", "'linkDriver' 'dpdk' is not pcap or afpacket")]
    [InlineData("jobs", "'jobAssemblyDirectory' 'jobs' must be an absolute path")]
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
            "jobs" => Valid with { JobAssemblyDirectory = "jobs" },
            _ => Valid with { DataDirectory = null },
        };
        var e = Assert.Throws<NodeConfigException>(config.Validate);
        Assert.Contains(expected, e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', e.Message);
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
