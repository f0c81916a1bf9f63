using System.Globalization;
using Camdoop.Runtime.Security;

namespace Camdoop.Cli.Testbed;

/// <summary>
/// A testbed's TLS credentials, made by `testbed up` as an operator makes a physical cube's with `camdoop certs`: a
/// new cluster CA in the data root (root's, 0700), a node certificate for every server (naming its coordinate and
/// its client-network address) in its data directory, and one client certificate for this machine's client
/// commands beside the testbed's state, handed to the user who ran sudo so that they need no root.
/// </summary>
public static class TestbedCredentials
{
    /// <summary>The CA's folder in the data root.</summary>
    public const string AuthorityFolder = "ca";

    /// <summary>A server's credentials folder inside its data directory.</summary>
    public static string NodeDirectory(string serverDirectory) => Path.GetFullPath(Path.Combine(serverDirectory, "certs"));

    /// <summary>Makes the CA, every server's node certificate and the client's; returns the client's directory.</summary>
    public static string Create(TestbedLayout layout, string dataRoot)
    {
        ArgumentNullException.ThrowIfNull(layout);
        string authorityDirectory = Path.Combine(dataRoot, AuthorityFolder);
        TestbedDataRoot.CreateDirectory(authorityDirectory);
        using var authority = ClusterAuthority.Init(authorityDirectory, $"camdoop testbed {layout.Prefix}", ClusterAuthority.DefaultAuthorityValidity);
        using var signer = ClusterAuthority.Load(authorityDirectory);
        foreach (var c in layout.Torus.All())
        {
            string serverDirectory = Path.Combine(dataRoot, string.Create(CultureInfo.InvariantCulture, $"{c.X}-{c.Y}-{c.Z}"));
            TestbedDataRoot.CreateDirectory(serverDirectory);
            string certs = NodeDirectory(serverDirectory);
            TestbedDataRoot.CreateDirectory(certs);
            ClusterAuthority.Issue(signer, CertificateRole.Node, c.Name, [System.Net.IPAddress.Parse(layout.ServerAddress(c))], ClusterAuthority.DefaultValidity, certs).Dispose();
        }
        Directory.CreateDirectory(TestbedState.Directory);
        string client = TestbedState.ClientCertsPathFor(layout.Prefix);
        if (Directory.Exists(client))
        {
            Directory.Delete(client, recursive: true);
        }
        TestbedDataRoot.CreateDirectory(client);
        ClusterAuthority.Issue(signer, CertificateRole.Client, Environment.GetEnvironmentVariable("SUDO_USER") ?? Environment.UserName, [], ClusterAuthority.DefaultValidity, client).Dispose();
        if (int.TryParse(Environment.GetEnvironmentVariable("SUDO_UID"), NumberStyles.None, CultureInfo.InvariantCulture, out int uid) && uid != 0)
        {
            SystemCommand.Run("chown", ["-R", uid.ToString(CultureInfo.InvariantCulture), client]);
        }
        return client;
    }
}
