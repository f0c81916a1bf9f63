using System.Net;
using System.Net.Sockets;
using Camdoop.Runtime.Security;

namespace Camdoop.Runtime.Tests.Security;

[System.Runtime.Versioning.SupportedOSPlatform("linux")]
public sealed class ClusterCredentialsTests : IDisposable
{
    private readonly string _root = Directory.CreateTempSubdirectory("camdoop-certs-").FullName;

    public void Dispose() => Directory.Delete(_root, recursive: true);

    private string Dir(string name) => Path.Combine(_root, name);

    private ClusterCredentials Issue(string ca, CertificateRole role, string name, TimeSpan? validity = null, params IPAddress[] addresses)
    {
        using var authority = ClusterAuthority.Load(Dir(ca));
        string output = Dir($"{ca}-{role.Name()}-{name}");
        ClusterAuthority.Issue(authority, role, name, addresses, validity ?? ClusterAuthority.DefaultValidity, output).Dispose();
        return ClusterCredentials.Load(output, role);
    }

    [Fact]
    public void TheCaIsMadeOnceAndItsKeyIsPrivate()
    {
        ClusterAuthority.Init(Dir("ca"), "test", ClusterAuthority.DefaultAuthorityValidity).Dispose();
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Path.Combine(Dir("ca"), "ca.key")));
        var again = Assert.Throws<CertificateException>(() => ClusterAuthority.Init(Dir("ca"), "test", ClusterAuthority.DefaultAuthorityValidity));
        Assert.Contains("already holds a cluster CA", again.Message, StringComparison.Ordinal);
        var missing = Assert.Throws<CertificateException>(() => ClusterAuthority.Load(Dir("none")));
        Assert.Contains("camdoop certs init", missing.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ANodeCertificateNamesItsServerAndAddressesAndItsKeyIsPrivate()
    {
        ClusterAuthority.Init(Dir("ca"), "test", ClusterAuthority.DefaultAuthorityValidity).Dispose();
        using var node = Issue("ca", CertificateRole.Node, "1,2,3", null, IPAddress.Parse("10.0.0.7"));
        Assert.Equal(new PeerIdentity(CertificateRole.Node, "1,2,3", node.Identity.Serial), node.Identity);
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite, File.GetUnixFileMode(Path.Combine(node.Source, "node.key")));
        Assert.Null(node.CheckServer(node.Certificate, IPAddress.Parse("10.0.0.7"), out var who));
        Assert.Equal("1,2,3", who!.Name);
        Assert.Contains("does not name the address 10.0.0.8", node.CheckServer(node.Certificate, IPAddress.Parse("10.0.0.8"), out _), StringComparison.Ordinal);
        // Loaded as a client's, it is refused: the role is part of what the file must be.
        File.Copy(Path.Combine(node.Source, "node.crt"), Path.Combine(node.Source, "client.crt"));
        File.Copy(Path.Combine(node.Source, "node.key"), Path.Combine(node.Source, "client.key"));
        var wrongRole = Assert.Throws<CertificateException>(() => ClusterCredentials.Load(node.Source, CertificateRole.Client));
        Assert.Contains("is a node certificate, not a client one", wrongRole.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void ForeignExpiredRevokedAndWrongRoleCertificatesAreRefusedInWords()
    {
        ClusterAuthority.Init(Dir("ca"), "test", ClusterAuthority.DefaultAuthorityValidity).Dispose();
        ClusterAuthority.Init(Dir("other"), "other", ClusterAuthority.DefaultAuthorityValidity).Dispose();
        using var node = Issue("ca", CertificateRole.Node, "0,0,0");
        using var client = Issue("ca", CertificateRole.Client, "alice");
        using var foreign = Issue("other", CertificateRole.Client, "mallory");
        Assert.Null(node.WhyRefused(client.Certificate, CertificateRole.Client, out var alice));
        Assert.Equal("alice", alice!.Name);
        Assert.Equal("no certificate was presented", node.WhyRefused(null, CertificateRole.Client, out _));
        Assert.Contains("was not issued by this cluster's CA", node.WhyRefused(foreign.Certificate, CertificateRole.Client, out _), StringComparison.Ordinal);
        Assert.Contains("may not connect here: a node certificate is required", node.WhyRefused(client.Certificate, CertificateRole.Node, out _), StringComparison.Ordinal);
        // An expired certificate: the loader refuses it for its holder, and a peer refuses it too.
        using var authority = ClusterAuthority.Load(Dir("ca"));
        using var expired = ClusterAuthority.Issue(authority, CertificateRole.Client, "old", [], TimeSpan.FromMinutes(-1), Dir("expired"));
        Assert.Contains("expired on", node.WhyRefused(expired, CertificateRole.Client, out _), StringComparison.Ordinal);
        Assert.Contains("expired on", Assert.Throws<CertificateException>(() => ClusterCredentials.Load(Dir("expired"), CertificateRole.Client)).Message, StringComparison.Ordinal);
        // Revoked by serial, in the node's revoked.txt.
        File.WriteAllText(Path.Combine(node.Source, ClusterCredentials.RevokedFile), $"# revoked\n{client.Identity.Serial.ToUpperInvariant()}\n");
        using var reloaded = ClusterCredentials.Load(node.Source, CertificateRole.Node);
        Assert.Contains("is revoked", reloaded.WhyRefused(client.Certificate, CertificateRole.Client, out _), StringComparison.Ordinal);
    }

    [Fact]
    public void WhileTheCaIsReplacedABundleOfBothIsTrustedAndThenTheOldOneIsNot()
    {
        ClusterAuthority.Init(Dir("ca"), "old", ClusterAuthority.DefaultAuthorityValidity).Dispose();
        ClusterAuthority.Init(Dir("new"), "new", ClusterAuthority.DefaultAuthorityValidity).Dispose();
        using var node = Issue("ca", CertificateRole.Node, "0,0,0");
        using var oldClient = Issue("ca", CertificateRole.Client, "old-client");
        using var newClient = Issue("new", CertificateRole.Client, "new-client");
        Assert.NotNull(node.WhyRefused(newClient.Certificate, CertificateRole.Client, out _));
        // Step 1: every holder's ca.crt holds both CAs.
        string bundle = File.ReadAllText(Path.Combine(Dir("ca"), "ca.crt")) + File.ReadAllText(Path.Combine(Dir("new"), "ca.crt"));
        File.WriteAllText(Path.Combine(node.Source, "ca.crt"), bundle);
        using (var both = ClusterCredentials.Load(node.Source, CertificateRole.Node))
        {
            Assert.Equal(2, both.Authorities.Count);
            Assert.Null(both.WhyRefused(oldClient.Certificate, CertificateRole.Client, out _));
            Assert.Null(both.WhyRefused(newClient.Certificate, CertificateRole.Client, out _));
        }
        // Step 3, once every certificate is the new CA's: ca.crt holds the new CA only, and the old CA's are refused.
        using var renewed = Issue("new", CertificateRole.Node, "0,0,0");
        Assert.Null(renewed.WhyRefused(newClient.Certificate, CertificateRole.Client, out _));
        Assert.Contains("was not issued by this cluster's CA", renewed.WhyRefused(oldClient.Certificate, CertificateRole.Client, out _), StringComparison.Ordinal);
        File.WriteAllText(Path.Combine(node.Source, "ca.crt"), "");
        Assert.Contains("holds no certificate", Assert.Throws<CertificateException>(() => ClusterCredentials.Load(node.Source, CertificateRole.Node)).Message, StringComparison.Ordinal);
    }

    [Fact]
    public async Task TwoHoldersTalkMutualTls13AndEachSeesTheOthersIdentity()
    {
        ClusterAuthority.Init(Dir("ca"), "test", ClusterAuthority.DefaultAuthorityValidity).Dispose();
        using var node = Issue("ca", CertificateRole.Node, "0,1,0", null, IPAddress.Loopback);
        using var client = Issue("ca", CertificateRole.Client, "bob");
        using var listener = new TcpListener(IPAddress.Loopback, 0);
        listener.Start();
        var port = ((IPEndPoint)listener.LocalEndpoint).Port;
        var serverSide = Task.Run(async () =>
        {
            using var socket = await listener.AcceptSocketAsync();
            await using var ssl = new System.Net.Security.SslStream(new NetworkStream(socket, ownsSocket: true));
            await ssl.AuthenticateAsServerAsync(node.ServerOptions());
            var refused = node.WhyRefused(ssl.RemoteCertificate, CertificateRole.Client, out var peer);
            await ssl.WriteAsync(new byte[] { 42 });
            return (ssl.SslProtocol, refused, peer);
        });
        using var tcp = new TcpClient();
        await tcp.ConnectAsync(IPAddress.Loopback, port);
        await using var stream = new System.Net.Security.SslStream(tcp.GetStream());
        await stream.AuthenticateAsClientAsync(client.ClientOptions("127.0.0.1"));
        Assert.Null(client.CheckServer(stream.RemoteCertificate, IPAddress.Loopback, out var server));
        Assert.Equal("0,1,0", server!.Name);
        var one = new byte[1];
        Assert.Equal(1, await stream.ReadAsync(one));
        Assert.Equal(42, one[0]);
        var (protocol, refusal, who) = await serverSide;
        Assert.Equal(System.Security.Authentication.SslProtocols.Tls13, protocol);
        Assert.Null(refusal);
        Assert.Equal("bob", who!.Name);
    }

    [Fact]
    public void ReplacedFilesAreReadAgainAndAnUnreadableReplacementKeepsTheOld()
    {
        ClusterAuthority.Init(Dir("ca"), "test", ClusterAuthority.DefaultAuthorityValidity).Dispose();
        using (Issue("ca", CertificateRole.Node, "0,0,0"))
        {
        }
        string dir = Dir("ca-node-0,0,0");
        var lines = new List<string>();
        var source = new CredentialsSource(dir, CertificateRole.Node, lines.Add);
        string first = source.Current.Identity.Serial;
        using (var authority = ClusterAuthority.Load(Dir("ca")))
        {
            ClusterAuthority.Issue(authority, CertificateRole.Node, "0,0,0", [], ClusterAuthority.DefaultValidity, dir).Dispose();
        }
        File.SetLastWriteTimeUtc(Path.Combine(dir, "node.crt"), DateTime.UtcNow.AddSeconds(5));
        var deadline = DateTime.UtcNow.AddSeconds(30);
        while (source.Current.Identity.Serial == first && DateTime.UtcNow < deadline)
        {
            Thread.Sleep(200);
        }
        Assert.NotEqual(first, source.Current.Identity.Serial);
        string second = source.Current.Identity.Serial;
        File.WriteAllText(Path.Combine(dir, "node.crt"), "not a certificate");
        File.SetLastWriteTimeUtc(Path.Combine(dir, "node.crt"), DateTime.UtcNow.AddSeconds(10));
        deadline = DateTime.UtcNow.AddSeconds(30);
        while (lines.Count < 2 && DateTime.UtcNow < deadline)
        {
            Assert.Equal(second, source.Current.Identity.Serial);
            Thread.Sleep(200);
        }
        Assert.Contains("cannot be used, keeping the ones loaded before", lines[^1], StringComparison.Ordinal);
    }
}
