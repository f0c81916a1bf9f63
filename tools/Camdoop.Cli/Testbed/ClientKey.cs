using Camdoop.Cli.CommandLine;
using Camdoop.FrontEnd.Auth;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Testbed;

/// <summary>
/// Which cluster key a client command proves itself with: --key-file FILE, else $CAMDOOP_KEY_FILE, else the key of
/// the emulated testbed on this machine whose front-end the command addresses (any prefix), so that client commands
/// on a testbed need no option.
/// </summary>
public static class ClientKey
{
    public const string Option = "key-file";

    public const string EnvironmentVariable = "CAMDOOP_KEY_FILE";

    public const string Help = "Cluster key file (default: $CAMDOOP_KEY_FILE, else the testbed's)";

    /// <summary>Loads the key for <paramref name="address"/>; a missing or unreadable key is one line, exit 1.</summary>
    public static ClusterKey Resolve(ParsedArguments args, string address)
    {
        ArgumentNullException.ThrowIfNull(args);
        string? path = args.String(Option)
            ?? NonEmpty(Environment.GetEnvironmentVariable(EnvironmentVariable))
            ?? TestbedState.FindByFrontEnd(address)?.KeyFile
            ?? throw new CliException($"{args.CommandPath}: no cluster key for front-end {address}: give --key-file FILE or set {EnvironmentVariable} (the key of a testbed on this machine is found by itself)");
        try
        {
            return ClusterKey.Load(path);
        }
        catch (FrontEndException e)
        {
            throw new CliException($"{args.CommandPath}: {e.Message}");
        }
    }

    private static string? NonEmpty(string? value) => string.IsNullOrEmpty(value) ? null : value;
}
