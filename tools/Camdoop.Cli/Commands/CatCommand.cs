using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop cat JOB`: prints a finished job's output, reduce task by reduce task (text jobs as key TAB value lines).</summary>
public static class CatCommand
{
    public static Command Create() =>
        new Command("cat", "Print a finished job's output (every reduce task's part, in order) to stdout or a file.")
            .Argument("job", "Job id")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Option("out", "Output file (default: stdout)", "FILE")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string jobId = args.Argument("job")!;
        using var client = FrontEndAddress.Connect(args);
        var status = FrontEndAddress.Call(() => client.Call(new JobStatusRequest { JobId = jobId }));
        if (status.State != "done")
        {
            throw new CliException($"cat: job {jobId} is {status.State}{(status.Failure is { } f ? $": {f}" : "")}");
        }
        long reducers = status.Reducers;
        string? outPath = args.String("out");
        using var output = outPath is null ? Console.OpenStandardOutput() : new FileStream(outPath, FileMode.Create, FileAccess.Write);
        for (long r = 0; r < reducers; r++)
        {
            FrontEndAddress.Call(() => client.Call(new JobPartRequest { JobId = jobId, ReduceTask = r }, part => output.Write(part.Data.Span)));
        }
        return 0;
    }
}
