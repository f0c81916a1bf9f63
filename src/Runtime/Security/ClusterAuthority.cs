using System.Net;
using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Camdoop.Runtime.Security;

/// <summary>
/// The cluster's own certificate authority, made and used with the framework's X509 classes (no external tool): a
/// self-signed CA, and node and client certificates it signs. Keys are ECDSA P-256 (cheap handshakes, as every TCP
/// connection of the cube has one). Every file is PEM, written mode 0600 from the moment it exists.
/// </summary>
public static class ClusterAuthority
{
    /// <summary>How long a CA lasts unless told otherwise: it signs every certificate, and replacing it means re-issuing all.</summary>
    public static readonly TimeSpan DefaultAuthorityValidity = TimeSpan.FromDays(3650);

    /// <summary>How long a node or client certificate lasts unless told otherwise.</summary>
    public static readonly TimeSpan DefaultValidity = TimeSpan.FromDays(365);

    private const string Organization = "camdoop";

    /// <summary>Creates a new CA in <paramref name="directory"/> (ca.crt, ca.key); refuses to replace one that is there.</summary>
    public static X509Certificate2 Init(string directory, string clusterName, TimeSpan validity)
    {
        ArgumentException.ThrowIfNullOrWhiteSpace(clusterName);
        string certificatePath = Path.Combine(directory, CertificateFiles.AuthorityCertificate);
        string keyPath = Path.Combine(directory, CertificateFiles.AuthorityKey);
        if (File.Exists(certificatePath) || File.Exists(keyPath))
        {
            throw new CertificateException($"{directory} already holds a cluster CA ({CertificateFiles.AuthorityCertificate}); refusing to replace it (every certificate it signed would stop working)");
        }
        Directory.CreateDirectory(directory);
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var name = new X500DistinguishedNameBuilder();
        name.AddOrganizationName(Organization);
        name.AddCommonName($"{clusterName} CA");
        var request = new CertificateRequest(name.Build(), key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(certificateAuthority: true, hasPathLengthConstraint: true, pathLengthConstraint: 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.KeyCertSign | X509KeyUsageFlags.CrlSign, critical: true));
        request.CertificateExtensions.Add(new X509SubjectKeyIdentifierExtension(request.PublicKey, critical: false));
        var now = DateTimeOffset.UtcNow;
        var authority = request.CreateSelfSigned(now.AddMinutes(-5), now + validity);
        WritePrivate(keyPath, key.ExportPkcs8PrivateKeyPem());
        WritePrivate(certificatePath, authority.ExportCertificatePem());
        return authority;
    }

    /// <summary>Loads the CA in <paramref name="directory"/> with its key, to sign with; one line when it is not there.</summary>
    public static X509Certificate2 Load(string directory)
    {
        string certificatePath = Path.Combine(directory, CertificateFiles.AuthorityCertificate);
        string keyPath = Path.Combine(directory, CertificateFiles.AuthorityKey);
        if (!File.Exists(keyPath))
        {
            throw new CertificateException($"{directory} holds no cluster CA key ({CertificateFiles.AuthorityKey}); create one with 'camdoop certs init --ca-dir {directory}'");
        }
        return CertificatePem.Load(certificatePath, keyPath);
    }

    /// <summary>
    /// Signs a certificate for <paramref name="role"/> named <paramref name="name"/> (a node's coordinate, a client's
    /// name) and writes it, its key and the CA's certificate into <paramref name="outputDirectory"/>. A node's
    /// certificate lists the addresses clients reach it at, which clients check.
    /// </summary>
    public static X509Certificate2 Issue(X509Certificate2 authority, CertificateRole role, string name, IEnumerable<IPAddress> addresses, TimeSpan validity, string outputDirectory)
    {
        ArgumentNullException.ThrowIfNull(authority);
        ArgumentException.ThrowIfNullOrWhiteSpace(name);
        using var key = ECDsa.Create(ECCurve.NamedCurves.nistP256);
        var subject = new X500DistinguishedNameBuilder();
        subject.AddOrganizationName(Organization);
        subject.AddOrganizationalUnitName(role.Name());
        subject.AddCommonName(name);
        var request = new CertificateRequest(subject.Build(), key, HashAlgorithmName.SHA256);
        request.CertificateExtensions.Add(new X509BasicConstraintsExtension(false, false, 0, critical: true));
        request.CertificateExtensions.Add(new X509KeyUsageExtension(X509KeyUsageFlags.DigitalSignature, critical: true));
        var usages = new OidCollection { new Oid("1.3.6.1.5.5.7.3.2", "clientAuth") };
        if (role == CertificateRole.Node)
        {
            usages.Add(new Oid("1.3.6.1.5.5.7.3.1", "serverAuth"));
        }
        request.CertificateExtensions.Add(new X509EnhancedKeyUsageExtension(usages, critical: false));
        var alternative = new SubjectAlternativeNameBuilder();
        alternative.AddDnsName(role == CertificateRole.Node ? "node-" + name.Replace(',', '-') : "client-" + name);
        foreach (var address in addresses)
        {
            alternative.AddIpAddress(address);
        }
        request.CertificateExtensions.Add(alternative.Build());
        request.CertificateExtensions.Add(X509AuthorityKeyIdentifierExtension.CreateFromCertificate(authority, includeKeyIdentifier: true, includeIssuerAndSerial: false));
        var now = DateTimeOffset.UtcNow;
        var notAfter = now + validity < authority.NotAfter ? now + validity : new DateTimeOffset(authority.NotAfter.ToUniversalTime());
        using var signed = request.Create(authority, now.AddMinutes(-5), notAfter, RandomNumberGenerator.GetBytes(16));
        var certificate = signed.CopyWithPrivateKey(key);
        Directory.CreateDirectory(outputDirectory);
        WritePrivate(Path.Combine(outputDirectory, CertificateFiles.Key(role)), key.ExportPkcs8PrivateKeyPem());
        WritePrivate(Path.Combine(outputDirectory, CertificateFiles.Certificate(role)), certificate.ExportCertificatePem());
        WritePrivate(Path.Combine(outputDirectory, CertificateFiles.AuthorityCertificate), authority.ExportCertificatePem());
        return certificate;
    }

    /// <summary>
    /// Writes a PEM file readable by its owner only, from the moment it exists, replacing any file there: keys must be,
    /// and certificates are too, so that a credentials directory is private as a whole (its owner may share ca.crt).
    /// </summary>
    private static void WritePrivate(string path, string pem)
    {
        string temporary = path + ".tmp";
        File.Delete(temporary);
        var options = new FileStreamOptions { Mode = FileMode.CreateNew, Access = FileAccess.Write };
        if (!OperatingSystem.IsWindows())
        {
            options.UnixCreateMode = UnixFileMode.UserRead | UnixFileMode.UserWrite;
        }
        using (var file = new FileStream(temporary, options))
        using (var writer = new StreamWriter(file))
        {
            writer.Write(pem);
            writer.Write('\n');
        }
        File.Move(temporary, path, overwrite: true);
    }
}
