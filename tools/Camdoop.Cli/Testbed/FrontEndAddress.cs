using Camdoop.Cli.CommandLine;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Testbed;

/// <summary>
/// Which front-end a client command talks to: --frontend HOST:PORT, else $CAMDOOP_FRONTEND, else the front-end of
/// the emulated testbed that is up (its state file).
/// </summary>
public static class FrontEndAddress
{
    public const string Option = "frontend";

    public static string Resolve(ParsedArguments args)
    {
        ArgumentNullException.ThrowIfNull(args);
        return args.String(Option)
            ?? Environment.GetEnvironmentVariable("CAMDOOP_FRONTEND")
            ?? TestbedState.TryLoad(TestbedState.DefaultPrefix)?.FrontEnd
            ?? throw CliException.Usage($"{args.CommandPath}: give --frontend HOST:PORT (or set CAMDOOP_FRONTEND, or bring up a testbed with 'camdoop testbed up')");
    }

    /// <summary>Connects and authenticates (<see cref="ClientCredentials"/>), turning an unreachable front-end or a refused certificate into one clear line.</summary>
    public static FrontEndClient Connect(ParsedArguments args) => Connect(args, Resolve(args));

    /// <summary>Connects to <paramref name="address"/> (a front-end the command chose itself) as <see cref="Connect(ParsedArguments)"/> does.</summary>
    public static FrontEndClient Connect(ParsedArguments args, string address)
    {
        ArgumentNullException.ThrowIfNull(address);
        var credentials = ClientCredentials.Resolve(args, address);
        try
        {
            return FrontEndClient.Connect(address, credentials);
        }
        catch (FrontEndException e)
        {
            throw new CliException(e.Message);
        }
    }

    /// <summary>
    /// One line for a front-end lost while a command waited on job <paramref name="jobId"/>: the job goes on (another
    /// server takes over its coordination), so it names a front-end to ask instead: another server of the testbed
    /// <paramref name="address"/> belongs to, or any other of the cube's.
    /// </summary>
    public static string LostWhileWaiting(string address, string jobId, FrontEndException lost)
    {
        ArgumentNullException.ThrowIfNull(address);
        ArgumentNullException.ThrowIfNull(lost);
        string other = TestbedState.FindByFrontEnd(address) is { } state
            && state.Servers.Where(s => TestbedLauncher.IsAlive(s.Pid)).Select(s => $"{s.Address}:{state.FrontEndPort}").FirstOrDefault(a => a != address) is { } next
            ? next
            : "HOST:PORT (another server of the cube)";
        return $"{lost.Message}; job {jobId} goes on without it: ask another front-end with 'camdoop status --wait {jobId} --frontend {other}'";
    }

    /// <summary>Runs a client call, turning the front-end's error reply into one clear line.</summary>
    public static T Call<T>(Func<T> call)
    {
        ArgumentNullException.ThrowIfNull(call);
        try
        {
            return call();
        }
        catch (FrontEndException e)
        {
            throw new CliException(e.Message);
        }
    }
}
