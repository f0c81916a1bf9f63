namespace Camdoop.Runtime.Security;

/// <summary>Who the other end of a connection proved to be: the role and the name its certificate carries.</summary>
/// <param name="Role">Node or client.</param>
/// <param name="Name">A node's coordinate ("x,y,z") or a client's name.</param>
/// <param name="Serial">The certificate's serial number (hex), to find it in a revocation list.</param>
public sealed record PeerIdentity(CertificateRole Role, string Name, string Serial)
{
    public override string ToString() => $"{Role.Name()} '{Name}'";
}
