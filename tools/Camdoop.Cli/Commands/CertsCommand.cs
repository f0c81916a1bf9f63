using System.Globalization;
using System.Net;
using Camdoop.Cli.CommandLine;
using Camdoop.Runtime.Security;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Commands;

/// <summary>
/// `camdoop certs init|node|client|show`: the cluster's CA and the certificates it signs, for a physical cube
/// (docs/security.md). A testbed makes its own with `testbed up`.
/// </summary>
public static class CertsCommand
{
    private const string CaDirHelp = "The CA's directory (ca.crt, ca.key); keep it off the cube";

    public static Command Create() =>
        new Command("certs", "Make the cluster's certificate authority and the node and client certificates it signs.")
            .Add(Init())
            .Add(Node())
            .Add(Client())
            .Add(Show());

    private static Command Init() =>
        new Command("init", "Create a new cluster CA: ca.crt (give it to every server and client) and ca.key (keep it private).")
            .Option("ca-dir", CaDirHelp, "DIR")
            .Option("name", "The cluster's name, in the CA's subject", "NAME", "camdoop")
            .Option("days", "How long the CA is valid", "DAYS", "3650")
            .Handle(args =>
            {
                string dir = args.Required("ca-dir");
                using var ca = Run(() => ClusterAuthority.Init(dir, args.Required("name"), Days(args)));
                Console.Out.WriteLine($"cluster CA {ca.Subject} in {Path.GetFullPath(dir)}, valid to {Date(ca.NotAfter)}; copy ca.crt to every server and client, keep ca.key private");
                return 0;
            });

    private static Command Node() =>
        new Command("node", "Sign a server's node certificate into a directory its node config names ('certsDirectory').")
            .Option("ca-dir", CaDirHelp, "DIR")
            .Option("server", "The server's coordinate", "X,Y,Z")
            .Option("address", "The addresses clients and servers reach it at, comma-separated", "IP[,IP]")
            .Option("out", "Where to write ca.crt, node.crt, node.key", "DIR")
            .Option("days", "How long the certificate is valid", "DAYS", "365")
            .Handle(args =>
            {
                string at = args.Required("server");
                if (!Coordinate.TryParse(at, out var server))
                {
                    throw CliException.Usage($"certs node: --server must be a coordinate like 1,2,0, not '{at}'");
                }
                var addresses = new List<IPAddress>();
                foreach (string text in args.Required("address").Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
                {
                    addresses.Add(IPAddress.TryParse(text, out var ip) ? ip : throw CliException.Usage($"certs node: --address '{text}' is not an IP address"));
                }
                return Issue(args, CertificateRole.Node, server.Name, addresses);
            });

    private static Command Client() =>
        new Command("client", "Sign a client certificate for the client commands (--certs DIR or $CAMDOOP_CERTS).")
            .Option("ca-dir", CaDirHelp, "DIR")
            .Option("name", "Who the client is (a user or a tool)", "NAME")
            .Option("out", "Where to write ca.crt, client.crt, client.key", "DIR")
            .Option("days", "How long the certificate is valid", "DAYS", "365")
            .Handle(args => Issue(args, CertificateRole.Client, args.Required("name"), []));

    private static Command Show() =>
        new Command("show", "Print what a credentials directory holds: who, which CA, valid until, serial.")
            .Argument("dir", "A node's or a client's credentials directory")
            .Handle(args =>
            {
                string dir = args.Argument("dir")!;
                var role = File.Exists(Path.Combine(dir, CertificateFiles.Certificate(CertificateRole.Node))) ? CertificateRole.Node : CertificateRole.Client;
                using var credentials = Run(() => ClusterCredentials.Load(dir, role));
                var c = credentials.Certificate;
                Console.Out.WriteLine($"{credentials.Identity}, serial {credentials.Identity.Serial}, valid {Date(c.NotBefore)} to {Date(c.NotAfter)}, issued by {credentials.Authority.Subject}");
                return 0;
            });

    private static int Issue(ParsedArguments args, CertificateRole role, string name, IReadOnlyList<IPAddress> addresses)
    {
        string output = args.Required("out");
        using var authority = Run(() => ClusterAuthority.Load(args.Required("ca-dir")));
        using var issued = Run(() => ClusterAuthority.Issue(authority, role, name, addresses, Days(args), output));
        Console.Out.WriteLine($"{role.Name()} certificate for '{name}' in {Path.GetFullPath(output)} (serial {issued.SerialNumber.ToLowerInvariant()}), valid to {Date(issued.NotAfter)}");
        return 0;
    }

    private static TimeSpan Days(ParsedArguments args) => TimeSpan.FromDays(args.Int("days", 1, 36500));

    private static string Date(DateTime when) => when.ToUniversalTime().ToString("yyyy-MM-dd", CultureInfo.InvariantCulture);

    private static T Run<T>(Func<T> action)
    {
        try
        {
            return action();
        }
        catch (CertificateException e)
        {
            throw new CliException($"certs: {e.Message}");
        }
        catch (Exception e) when (e is IOException or UnauthorizedAccessException)
        {
            throw new CliException($"certs: {e.Message}");
        }
    }
}
