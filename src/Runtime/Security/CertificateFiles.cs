namespace Camdoop.Runtime.Security;

/// <summary>
/// Where a credentials directory keeps its PEM files: the cluster CA's certificate (every holder), the CA's key (the
/// operator's CA directory only), and one certificate with its key named by role (node.crt and node.key on a
/// server, client.crt and client.key with a client).
/// </summary>
public static class CertificateFiles
{
    public const string AuthorityCertificate = "ca.crt";

    public const string AuthorityKey = "ca.key";

    public static string Certificate(CertificateRole role) => role.Name() + ".crt";

    public static string Key(CertificateRole role) => role.Name() + ".key";
}
