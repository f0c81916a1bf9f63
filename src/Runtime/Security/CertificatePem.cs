using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;

namespace Camdoop.Runtime.Security;

/// <summary>Reads PEM certificates and keys, failing with one line that names the file.</summary>
internal static class CertificatePem
{
    /// <summary>A certificate with its private key.</summary>
    public static X509Certificate2 Load(string certificatePath, string keyPath)
    {
        Require(certificatePath);
        Require(keyPath);
        try
        {
            using var pem = X509Certificate2.CreateFromPemFile(certificatePath, keyPath);
            // Exported and imported again: on Linux a key loaded from PEM is ephemeral, which TLS accepts, but a
            // PKCS#12 round trip gives one object that every platform's TLS takes.
            return X509CertificateLoader.LoadPkcs12(pem.Export(X509ContentType.Pkcs12), null);
        }
        catch (Exception e) when (e is CryptographicException or IOException or UnauthorizedAccessException or ArgumentException)
        {
            throw new CertificateException($"cannot read certificate {certificatePath} with key {keyPath}: {e.Message}", e);
        }
    }

    /// <summary>Every certificate in a PEM file (a CA bundle); one line when there is none.</summary>
    public static X509Certificate2Collection LoadAll(string certificatePath)
    {
        Require(certificatePath);
        var all = new X509Certificate2Collection();
        try
        {
            all.ImportFromPemFile(certificatePath);
        }
        catch (Exception e) when (e is CryptographicException or IOException or UnauthorizedAccessException or ArgumentException)
        {
            throw new CertificateException($"cannot read certificate {certificatePath}: {e.Message}", e);
        }
        if (all.Count == 0)
        {
            throw new CertificateException($"{certificatePath} holds no certificate");
        }
        return all;
    }

    private static void Require(string path)
    {
        if (!File.Exists(path))
        {
            throw new CertificateException($"{path} does not exist");
        }
    }
}
