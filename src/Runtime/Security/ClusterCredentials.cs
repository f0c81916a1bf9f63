using System.Globalization;
using System.Net;
using System.Net.Security;
using System.Security.Authentication;
using System.Security.Cryptography.X509Certificates;

namespace Camdoop.Runtime.Security;

/// <summary>
/// What one holder (a server or a client) proves itself with and trusts: the cluster CA's certificate, its own
/// certificate and key, and the serial numbers the operator revoked (revoked.txt beside them, one hex serial a
/// line). Gives TLS 1.3 options for either end of a connection, and checks the certificate the other end showed:
/// issued by this cluster's CA, in its validity period, not revoked, of the role the connection needs.
/// </summary>
public sealed class ClusterCredentials : IDisposable
{
    public const string RevokedFile = "revoked.txt";

    private readonly HashSet<string> _revoked;
    private readonly SslStreamCertificateContext _context;

    private ClusterCredentials(X509Certificate2Collection authorities, X509Certificate2 certificate, HashSet<string> revoked, string source)
    {
        Authorities = authorities;
        Authority = authorities[0];
        Certificate = certificate;
        _revoked = revoked;
        Source = source;
        Identity = Identify(certificate) ?? throw new CertificateException($"{source}: {certificate.Subject} is not a camdoop node or client certificate");
        _context = SslStreamCertificateContext.Create(certificate, [], offline: true);
    }

    /// <summary>The cluster CA (the first in ca.crt).</summary>
    public X509Certificate2 Authority { get; }

    /// <summary>
    /// Every CA in ca.crt: the only issuers trusted. One, except while the CA is replaced: then the old and the new,
    /// so that certificates of either are taken until every holder has one of the new.
    /// </summary>
    public X509Certificate2Collection Authorities { get; }

    /// <summary>This holder's own certificate, with its private key.</summary>
    public X509Certificate2 Certificate { get; }

    /// <summary>The role and name this holder's certificate gives it.</summary>
    public PeerIdentity Identity { get; }

    /// <summary>The directory the credentials came from, for messages.</summary>
    public string Source { get; }

    /// <summary>
    /// Reads ca.crt, ROLE.crt, ROLE.key (and revoked.txt, when there) from <paramref name="directory"/>; refuses a
    /// certificate that is not the CA's or is out of its validity period, in one line.
    /// </summary>
    public static ClusterCredentials Load(string directory, CertificateRole role)
    {
        ArgumentNullException.ThrowIfNull(directory);
        if (!Directory.Exists(directory))
        {
            throw new CertificateException($"credentials directory {directory} does not exist");
        }
        var authority = CertificatePem.LoadAll(Path.Combine(directory, CertificateFiles.AuthorityCertificate));
        var certificate = CertificatePem.Load(Path.Combine(directory, CertificateFiles.Certificate(role)), Path.Combine(directory, CertificateFiles.Key(role)));
        var credentials = new ClusterCredentials(authority, certificate, ReadRevoked(directory), directory);
        if (credentials.Identity.Role != role)
        {
            throw new CertificateException($"{directory}: {CertificateFiles.Certificate(role)} is a {credentials.Identity.Role.Name()} certificate, not a {role.Name()} one");
        }
        if (credentials.WhyRefused(certificate, role, out _) is { } problem)
        {
            throw new CertificateException($"{directory}: {CertificateFiles.Certificate(role)}: {problem}");
        }
        return credentials;
    }

    /// <summary>
    /// Options for the accepting end: this holder's certificate, TLS 1.3 only, a client certificate asked for. The
    /// handshake takes any certificate (or none), so that <see cref="WhyRefused"/> can say in words why one is
    /// refused, over the encrypted connection, before anything else is served.
    /// </summary>
    public SslServerAuthenticationOptions ServerOptions() => new()
    {
        ServerCertificateContext = _context,
        EnabledSslProtocols = SslProtocols.Tls13,
        ClientCertificateRequired = true,
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        RemoteCertificateValidationCallback = (_, _, _, _) => true,
    };

    /// <summary>Options for the connecting end; the server's certificate is checked after the handshake (<see cref="CheckServer"/>).</summary>
    public SslClientAuthenticationOptions ClientOptions(string targetHost) => new()
    {
        TargetHost = targetHost,
        ClientCertificateContext = _context,
        EnabledSslProtocols = SslProtocols.Tls13,
        CertificateRevocationCheckMode = X509RevocationMode.NoCheck,
        RemoteCertificateValidationCallback = (_, _, _, _) => true,
    };

    /// <summary>
    /// Why <paramref name="presented"/> may not act as <paramref name="role"/> here, in words; null (with who it is)
    /// when it may.
    /// </summary>
    public string? WhyRefused(X509Certificate? presented, CertificateRole role, out PeerIdentity? identity)
    {
        identity = null;
        if (presented is null)
        {
            return "no certificate was presented";
        }
        var certificate = presented as X509Certificate2 ?? X509CertificateLoader.LoadCertificate(presented.GetRawCertData());
        var now = DateTime.UtcNow;
        if (certificate.NotAfter.ToUniversalTime() < now)
        {
            return $"the certificate of {Describe(certificate)} expired on {certificate.NotAfter.ToUniversalTime().ToString("yyyy-MM-dd HH:mm 'UTC'", CultureInfo.InvariantCulture)}";
        }
        if (certificate.NotBefore.ToUniversalTime() > now)
        {
            return $"the certificate of {Describe(certificate)} is not valid before {certificate.NotBefore.ToUniversalTime().ToString("yyyy-MM-dd HH:mm 'UTC'", CultureInfo.InvariantCulture)}";
        }
        if (!IssuedByAuthority(certificate))
        {
            return $"the certificate of {Describe(certificate)} was not issued by this cluster's CA ({Authority.Subject})";
        }
        var who = Identify(certificate);
        if (who is null)
        {
            return $"the certificate {certificate.Subject} names no camdoop node or client";
        }
        if (_revoked.Contains(who.Serial))
        {
            return $"the certificate of {who} (serial {who.Serial}) is revoked";
        }
        if (who.Role != role)
        {
            return $"{who} may not connect here: a {role.Name()} certificate is required";
        }
        identity = who;
        return null;
    }

    /// <summary>Checks the server a client reached: a node of this cluster, its certificate naming the address dialled.</summary>
    public string? CheckServer(X509Certificate? presented, IPAddress? dialled, out PeerIdentity? identity)
    {
        if (WhyRefused(presented, CertificateRole.Node, out identity) is { } problem)
        {
            return problem;
        }
        if (dialled is not null && !Names(presented!, dialled))
        {
            string who = identity!.ToString();
            identity = null;
            return $"the certificate of {who} does not name the address {dialled} it was reached at";
        }
        return null;
    }

    public void Dispose()
    {
        Certificate.Dispose();
        foreach (var a in Authorities)
        {
            a.Dispose();
        }
    }

    /// <summary>The role and name in a certificate's subject (OU and CN), or null when it is not a camdoop certificate.</summary>
    public static PeerIdentity? Identify(X509Certificate2 certificate)
    {
        ArgumentNullException.ThrowIfNull(certificate);
        CertificateRole? role = null;
        string? name = null;
        foreach (var part in certificate.SubjectName.EnumerateRelativeDistinguishedNames())
        {
            switch (part.GetSingleElementType().Value)
            {
                case "2.5.4.11":
                    role = CertificateRoles.Parse(part.GetSingleElementValue());
                    break;
                case "2.5.4.3":
                    name = part.GetSingleElementValue();
                    break;
            }
        }
        return role is { } r && !string.IsNullOrEmpty(name) ? new PeerIdentity(r, name, certificate.SerialNumber.ToLowerInvariant()) : null;
    }

    private bool IssuedByAuthority(X509Certificate2 certificate)
    {
        using var chain = new X509Chain();
        chain.ChainPolicy.TrustMode = X509ChainTrustMode.CustomRootTrust;
        chain.ChainPolicy.CustomTrustStore.AddRange(Authorities);
        chain.ChainPolicy.RevocationMode = X509RevocationMode.NoCheck;
        chain.ChainPolicy.DisableCertificateDownloads = true;
        return chain.Build(certificate)
            && chain.ChainElements.Count == 2
            && Authorities.Any(a => chain.ChainElements[^1].Certificate.RawDataMemory.Span.SequenceEqual(a.RawDataMemory.Span));
    }

    private static bool Names(X509Certificate presented, IPAddress address)
    {
        var certificate = presented as X509Certificate2 ?? X509CertificateLoader.LoadCertificate(presented.GetRawCertData());
        var mapped = address.IsIPv4MappedToIPv6 ? address.MapToIPv4() : address;
        foreach (var extension in certificate.Extensions)
        {
            if (extension is X509SubjectAlternativeNameExtension names && names.EnumerateIPAddresses().Any(a => a.Equals(mapped)))
            {
                return true;
            }
        }
        return false;
    }

    private static string Describe(X509Certificate2 certificate) => Identify(certificate)?.ToString() ?? certificate.Subject;

    private static HashSet<string> ReadRevoked(string directory)
    {
        string path = Path.Combine(directory, RevokedFile);
        if (!File.Exists(path))
        {
            return [];
        }
        return [.. File.ReadAllLines(path).Select(l => l.Trim().ToLowerInvariant()).Where(l => l.Length > 0 && !l.StartsWith('#'))];
    }
}
