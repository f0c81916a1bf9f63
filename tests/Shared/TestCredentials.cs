using System.Collections.Concurrent;
using System.Net;
using Camdoop.Runtime.Security;

namespace Camdoop.Tests.Shared;

/// <summary>
/// TLS credentials for tests, made once per test process with the product's own CA code in a temporary directory: a
/// cluster CA, node certificates on loopback, a client, and the ones that must be refused (another CA's client, an
/// expired client, a node's certificate used as a client's).
/// </summary>
internal static class TestCredentials
{
    private static readonly Lazy<string> Root = new(Create);
    private static readonly ConcurrentDictionary<string, CredentialsSource> Nodes = new();
    private static readonly Lock Gate = new();

    /// <summary>The credentials of node <paramref name="server"/> ("x,y,z"), naming 127.0.0.1.</summary>
    public static CredentialsSource Node(string server = "0,0,0") => Nodes.GetOrAdd(server, name =>
    {
        string dir = Path.Combine(Root.Value, "node-" + name.Replace(',', '-'));
        lock (Gate)
        {
            if (!Directory.Exists(dir))
            {
                using var authority = ClusterAuthority.Load(Path.Combine(Root.Value, "ca"));
                ClusterAuthority.Issue(authority, CertificateRole.Node, name, [IPAddress.Loopback, IPAddress.IPv6Loopback], ClusterAuthority.DefaultValidity, dir).Dispose();
            }
        }
        return new CredentialsSource(dir, CertificateRole.Node);
    });

    /// <summary>A client of the test cluster.</summary>
    public static ClusterCredentials Client => ClusterCredentials.Load(Path.Combine(Root.Value, "client"), CertificateRole.Client);

    /// <summary>The directory of <see cref="Client"/>.</summary>
    public static string ClientDirectory => Path.Combine(Root.Value, "client");

    /// <summary>A client whose certificate another cluster's CA signed.</summary>
    public static ClusterCredentials ForeignClient => ClusterCredentials.Load(Path.Combine(Root.Value, "foreign-client"), CertificateRole.Client);

    /// <summary>The test cluster's CA directory (with its key), to sign more.</summary>
    public static string AuthorityDirectory => Path.Combine(Root.Value, "ca");

    private static string Create()
    {
        string root = Directory.CreateTempSubdirectory("camdoop-test-certs-").FullName;
        AppDomain.CurrentDomain.ProcessExit += (_, _) =>
        {
            try
            {
                Directory.Delete(root, recursive: true);
            }
            catch (IOException)
            {
                // A temporary directory left behind is harmless.
            }
        };
        using (var authority = ClusterAuthority.Init(Path.Combine(root, "ca"), "test", ClusterAuthority.DefaultAuthorityValidity))
        using (var signer = ClusterAuthority.Load(Path.Combine(root, "ca")))
        {
            ClusterAuthority.Issue(signer, CertificateRole.Client, "test client", [], ClusterAuthority.DefaultValidity, Path.Combine(root, "client")).Dispose();
        }
        using (ClusterAuthority.Init(Path.Combine(root, "other-ca"), "other", ClusterAuthority.DefaultAuthorityValidity))
        using (var other = ClusterAuthority.Load(Path.Combine(root, "other-ca")))
        {
            ClusterAuthority.Issue(other, CertificateRole.Client, "mallory", [], ClusterAuthority.DefaultValidity, Path.Combine(root, "foreign-client")).Dispose();
        }
        return root;
    }
}
