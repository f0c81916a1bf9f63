using System.Net;
using System.Net.Security;
using System.Security.Cryptography.X509Certificates;
using Camdoop.Runtime.Security;

namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

/// <summary>
/// A cluster CA made for a test in a temporary directory, a node certificate it signed for 127.0.0.1, and clients
/// that trust that CA and no other.
/// </summary>
internal sealed class TestAuthority : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-web-ca-").FullName;
    private readonly ClusterCredentials _node;

    public TestAuthority()
    {
        using var authority = ClusterAuthority.Init(Path.Combine(_directory, "ca"), "web-test", TimeSpan.FromDays(1));
        using var _ = ClusterAuthority.Issue(authority, CertificateRole.Node, "0,0,0", [IPAddress.Loopback], TimeSpan.FromDays(1), Path.Combine(_directory, "node"));
        _node = ClusterCredentials.Load(Path.Combine(_directory, "node"), CertificateRole.Node);
    }

    /// <summary>The node's certificate, with its key.</summary>
    public X509Certificate2 Certificate => _node.Certificate;

    /// <summary>Accepts a server certificate only when it chains to this CA and names the address dialled.</summary>
    public bool Trusts(X509Certificate? certificate, SslPolicyErrors errors)
    {
        if (certificate is null || errors.HasFlag(SslPolicyErrors.RemoteCertificateNameMismatch) || errors.HasFlag(SslPolicyErrors.RemoteCertificateNotAvailable))
        {
            return false;
        }
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(_node.Authority);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        using var presented = X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
        return chain.Build(presented);
    }

    /// <summary>An HTTPS client of <paramref name="server"/> that trusts this CA, keeps no cookies and follows no redirect.</summary>
    public HttpClient Client(IPEndPoint server) => new(new SocketsHttpHandler
    {
        UseCookies = false,
        AllowAutoRedirect = false,
        SslOptions = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = (_, certificate, _, errors) => Trusts(certificate, errors) },
    })
    {
        BaseAddress = new Uri($"https://{server}/"),
        Timeout = TimeSpan.FromSeconds(30),
    };

    public void Dispose()
    {
        _node.Dispose();
        Directory.Delete(_directory, recursive: true);
    }
}
