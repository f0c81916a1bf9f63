namespace Camdoop.Runtime.Security;

/// <summary>
/// What a certificate of the cluster's CA lets its holder do, written in its subject's organizational unit: a node
/// serves clients and opens streams to other nodes; a client only talks to front-ends.
/// </summary>
public enum CertificateRole
{
    Node,
    Client,
}

public static class CertificateRoles
{
    public static string Name(this CertificateRole role) => role == CertificateRole.Node ? "node" : "client";

    public static CertificateRole? Parse(string? text) => text switch
    {
        "node" => CertificateRole.Node,
        "client" => CertificateRole.Client,
        _ => null,
    };
}
