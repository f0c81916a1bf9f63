using System.Net.Security;
using System.Security.Cryptography.X509Certificates;

namespace Camdoop.Cli.Tests.Support;

/// <summary>
/// An HTTPS client of a web view that trusts one cluster CA only, as a browser or a Prometheus given its ca.crt would,
/// and keeps no cookies and follows no redirect, so each test sees exactly what the server answered.
/// </summary>
internal static class CaTrustingHttpClient
{
    public static HttpClient Create(X509Certificate2 authority, TimeSpan timeout, Uri? baseAddress = null) => new(new SocketsHttpHandler
    {
        UseCookies = false,
        AllowAutoRedirect = false,
        SslOptions = new SslClientAuthenticationOptions { RemoteCertificateValidationCallback = (_, certificate, _, errors) => Trusts(authority, certificate, errors) },
    })
    {
        BaseAddress = baseAddress,
        Timeout = timeout,
    };

    /// <summary>The certificate names the address dialled and chains to <paramref name="authority"/>.</summary>
    public static bool Trusts(X509Certificate2 authority, X509Certificate? certificate, SslPolicyErrors errors)
    {
        if (certificate is null || errors.HasFlag(SslPolicyErrors.RemoteCertificateNameMismatch))
        {
            return false;
        }
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.Add(authority);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        using var presented = X509CertificateLoader.LoadCertificate(certificate.GetRawCertData());
        return chain.Build(presented);
    }
}
