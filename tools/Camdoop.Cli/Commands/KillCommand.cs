using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop kill JOB`: cancels a running job on every server; the other jobs go on.</summary>
public static class KillCommand
{
    public static Command Create() =>
        new Command("kill", "Cancel a running job on every server: its vertices, streams and buffers are freed and its partial output deleted; other jobs go on.")
            .Argument("job", "Job id")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("json", "Print the result as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string jobId = args.Argument("job")!;
        using var client = FrontEndAddress.Connect(args);
        var reply = FrontEndAddress.Call(() => client.Call(new KillRequest { JobId = jobId }));
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new { jobId = reply.JobId, was = reply.Was, servers = reply.Servers, frontend = client.Address });
            return 0;
        }
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"job {reply.JobId} killed while {reply.Was}: {reply.Servers} servers told to drop it"));
        return 0;
    }
}
