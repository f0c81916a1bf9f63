using Camdoop.Cli.CommandLine;
using Camdoop.Runtime.Security;

namespace Camdoop.Cli.Testbed;

/// <summary>
/// Which credentials a client command connects with: --certs DIR, else $CAMDOOP_CERTS, else the client credentials
/// of the emulated testbed on this machine whose front-end the command addresses (any prefix), so that client
/// commands on a testbed need no option. A directory holds ca.crt, client.crt and client.key (`camdoop certs client`).
/// </summary>
public static class ClientCredentials
{
    public const string Option = "certs";

    public const string EnvironmentVariable = "CAMDOOP_CERTS";

    public const string Help = "Client credentials directory: ca.crt, client.crt, client.key (default: $CAMDOOP_CERTS, else the testbed's)";

    /// <summary>Loads the credentials for <paramref name="address"/>; missing or unusable ones are one line, exit 1.</summary>
    public static ClusterCredentials Resolve(ParsedArguments args, string address)
    {
        ArgumentNullException.ThrowIfNull(args);
        string? directory = args.String(Option)
            ?? NonEmpty(Environment.GetEnvironmentVariable(EnvironmentVariable))
            ?? TestbedState.FindByFrontEnd(address)?.ClientCerts
            ?? throw new CliException($"{args.CommandPath}: no client credentials for front-end {address}: give --certs DIR or set {EnvironmentVariable} (a testbed's on this machine are found by themselves)");
        try
        {
            return ClusterCredentials.Load(directory, CertificateRole.Client);
        }
        catch (CertificateException e)
        {
            throw new CliException($"{args.CommandPath}: {e.Message}");
        }
    }

    private static string? NonEmpty(string? value) => string.IsNullOrEmpty(value) ? null : value;
}
