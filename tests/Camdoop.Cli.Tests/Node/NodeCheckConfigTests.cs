using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using Camdoop.Cli.Tests.Support;
using Camdoop.Hosting;
using Camdoop.Runtime.Security;

namespace Camdoop.Cli.Tests.Node;

/// <summary>
/// `camdoop node --check-config` on real files: a config, credentials made with `camdoop certs`, a data directory and
/// the loopback interface, each spoilt in turn.
/// </summary>
[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class NodeCheckConfigTests : IDisposable
{
    private readonly string _dir = Directory.CreateTempSubdirectory("camdoop-checkconfig-").FullName;

    public NodeCheckConfigTests()
    {
        // Open to others as /etc/camdoop is: one test reads it as another user.
        File.SetUnixFileMode(_dir, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute | UnixFileMode.GroupRead |
                                   UnixFileMode.GroupExecute | UnixFileMode.OtherRead | UnixFileMode.OtherExecute);
        Directory.CreateDirectory(Data);
        Assert.Equal(0, CliRunner.Run("certs", "init", "--ca-dir", Ca).ExitCode);
        Assert.Equal(0, CliRunner.Run("certs", "node", "--ca-dir", Ca, "--server", "1,2,0", "--address", "127.0.0.1", "--out", Certs).ExitCode);
        Good.Save(ConfigPath);
    }

    private string Ca => Path.Combine(_dir, "ca");

    private string Certs => Path.Combine(_dir, "certs");

    private string Data => Path.Combine(_dir, "data");

    private string ConfigPath => Path.Combine(_dir, "node.json");

    private NodeConfig Good => new()
    {
        Coordinate = "1,2,0",
        Torus = "3x3x3",
        Ports = new Dictionary<string, string> { ["+X"] = "lo" },
        DataDirectory = Data,
        UplinkAddress = "127.0.0.1",
        FrontEndPort = 7070,
        CertsDirectory = Certs,
    };

    private static bool HasNetRaw => File.ReadLines("/proc/self/status")
        .Where(l => l.StartsWith("CapEff:", StringComparison.Ordinal))
        .Any(l => (Convert.ToUInt64(l["CapEff:".Length..].Trim(), 16) & (1UL << 13)) != 0);

    private CliResult Check() => CliRunner.Run("node", "--config", ConfigPath, "--check-config");

    [Fact]
    public void AGoodConfigPassesInOneLineWithoutStartingTheNode()
    {
        var result = Check();
        if (!HasNetRaw)
        {
            OneLineError.Assert(result, "raw Ethernet sockets need root or CAP_NET_RAW");
            return;
        }
        Assert.True(result.ExitCode == 0, result.ToString());
        string line = Assert.Single(result.Stdout.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.StartsWith("config OK: node 1,2,0 of 3x3x3; certificate node '1,2,0' valid to ", line, StringComparison.Ordinal);
        Assert.Contains("ports +X lo", line, StringComparison.Ordinal);
        Assert.Contains("CAP_NET_RAW", line, StringComparison.Ordinal);
        Assert.Empty(result.Stderr);
        // Not started: no status file, no log.
        Assert.Empty(Directory.GetFileSystemEntries(Data));
    }

    [Fact]
    public void BadJsonIsOneLine()
    {
        File.WriteAllText(ConfigPath, "{ \"torus\": ");
        OneLineError.Assert(Check(), $"node config {ConfigPath} is not valid JSON");
    }

    [Fact]
    public void ABadFieldIsOneLine()
    {
        (Good with { LogLevel = "loud" }).Save(ConfigPath);
        OneLineError.Assert(Check(), "'logLevel' 'loud' is not debug, info, warning or error");
    }

    [Fact]
    public void AnUnknownLogFormatIsOneLine()
    {
        (Good with { LogFormat = "xml" }).Save(ConfigPath);
        OneLineError.Assert(Check(), "'logFormat' 'xml' is not text or json");
    }

    [Fact]
    public void AMisspeltFieldIsOneLine()
    {
        // The node itself would take the default front-end port, 0, and run no front-end.
        File.WriteAllText(ConfigPath, File.ReadAllText(ConfigPath).Replace("\"frontEndPort\"", "\"frontendPort\"", StringComparison.Ordinal));
        OneLineError.Assert(Check(), $"node config {ConfigPath}: unknown field 'frontendPort', did you mean 'frontEndPort'?");
    }

    [Fact]
    public void AMissingCertificateIsOneLine()
    {
        File.Delete(Path.Combine(Certs, "node.crt"));
        OneLineError.Assert(Check(), $"certificates: {Path.Combine(Certs, "node.crt")} does not exist");
    }

    [Fact]
    public void AKeyOthersCanReadIsOneLine()
    {
        string key = Path.Combine(Certs, "node.key");
        File.SetUnixFileMode(key, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.GroupRead | UnixFileMode.OtherRead);
        OneLineError.Assert(Check(), $"certificates: {key} has mode 0644: a private key must be readable by its owner only (chmod 600 {key})");
    }

    [Fact]
    public void ACertificateOfAnotherCaIsOneLine()
    {
        string other = Path.Combine(_dir, "other-ca");
        string issued = Path.Combine(_dir, "other-certs");
        Assert.Equal(0, CliRunner.Run("certs", "init", "--ca-dir", other, "--name", "other").ExitCode);
        Assert.Equal(0, CliRunner.Run("certs", "node", "--ca-dir", other, "--server", "1,2,0", "--address", "127.0.0.1", "--out", issued).ExitCode);
        File.Copy(Path.Combine(issued, "node.crt"), Path.Combine(Certs, "node.crt"), overwrite: true);
        File.Copy(Path.Combine(issued, "node.key"), Path.Combine(Certs, "node.key"), overwrite: true);
        OneLineError.Assert(Check(), "was not issued by this cluster's CA (O=camdoop, CN=camdoop CA)");
    }

    [Fact]
    public void AnExpiredCertificateIsOneLine()
    {
        // Signed by the cluster's own CA, but with a validity period that has ended (the certs command makes none such).
        using var authority = ClusterAuthority.Load(Ca);
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var subject = new X500DistinguishedNameBuilder();
        subject.AddOrganizationName("camdoop");
        subject.AddOrganizationalUnitName("node");
        subject.AddCommonName("1,2,0");
        var request = new CertificateRequest(subject.Build(), key, HashAlgorithmName.SHA256);
        var alternative = new SubjectAlternativeNameBuilder();
        alternative.AddIpAddress(IPAddress.Loopback);
        request.CertificateExtensions.Add(alternative.Build());
        // The CA itself is valid from five minutes ago: the certificate's minute within them is over.
        var start = new DateTimeOffset(authority.NotBefore.ToUniversalTime());
        using var expired = request.Create(authority, start, start.AddMinutes(1), RandomNumberGenerator.GetBytes(16));
        File.WriteAllText(Path.Combine(Certs, "node.crt"), expired.ExportCertificatePem() + "\n");
        File.WriteAllText(Path.Combine(Certs, "node.key"), key.ExportPkcs8PrivateKeyPem() + "\n");
        File.SetUnixFileMode(Path.Combine(Certs, "node.key"), UnixFileMode.UserRead | UnixFileMode.UserWrite);
        OneLineError.Assert(Check(), "certificates: " + Certs + ": node.crt: the certificate of node '1,2,0' expired on ");
    }

    [Fact]
    public void ACertificateOfAnotherServerIsOneLine()
    {
        Assert.Equal(0, CliRunner.Run("certs", "node", "--ca-dir", Ca, "--server", "0,0,0", "--address", "127.0.0.1", "--out", Certs).ExitCode);
        OneLineError.Assert(Check(), $"certificates: the node certificate in {Certs} is server 0,0,0's, not 1,2,0's");
    }

    [Fact]
    public void AnUnknownInterfaceIsOneLine()
    {
        (Good with { Ports = new Dictionary<string, string> { ["+X"] = "lo", ["-Y"] = "cdnone0" } }).Save(ConfigPath);
        OneLineError.Assert(Check(), "port -Y: network interface cdnone0 does not exist");
    }

    [RootFact]
    public void AnInterfaceWhoseMtuIsTooSmallForTheFramesIsOneLine()
    {
        // A veth pair made for the test, at the default MTU 1500: the default 9,014-byte frames need 9000.
        string nic = $"cdchk{Environment.ProcessId % 100000}";
        Assert.Equal(0, Ip("link", "add", nic, "type", "veth", "peer", "name", nic + "p"));
        try
        {
            (Good with { Ports = new Dictionary<string, string> { ["+Z"] = nic } }).Save(ConfigPath);
            OneLineError.Assert(Check(), $"port +Z: interface {nic} has MTU 1500, but 9014-byte frames need MTU 9000 or more (ip link set dev {nic} mtu 9000");
        }
        finally
        {
            Ip("link", "del", nic);
        }
    }

    [Fact]
    public void AnUnwritableDataDirectoryIsOneLine()
    {
        File.SetUnixFileMode(Data, UnixFileMode.UserRead | UnixFileMode.UserExecute | UnixFileMode.GroupRead | UnixFileMode.GroupExecute |
                                   UnixFileMode.OtherRead | UnixFileMode.OtherExecute);
        // Root writes anywhere: the check then runs as nobody, who can read the config but not write there.
        var result = Camdoop.Cli.Testbed.SystemCommand.IsRoot
            ? CliRunner.RunAs(65534, TimeSpan.FromMinutes(2), "node", "--config", ConfigPath, "--check-config")
            : Check();
        OneLineError.Assert(result, $"data directory {Data} is not writable by user ");
    }

    private static int Ip(params string[] args)
    {
        var psi = new System.Diagnostics.ProcessStartInfo("ip") { RedirectStandardError = true };
        foreach (string a in args)
        {
            psi.ArgumentList.Add(a);
        }
        using var process = System.Diagnostics.Process.Start(psi)!;
        process.StandardError.ReadToEnd();
        process.WaitForExit();
        return process.ExitCode;
    }

    public void Dispose()
    {
        File.SetUnixFileMode(Data, UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute);
        Directory.Delete(_dir, recursive: true);
    }
}
