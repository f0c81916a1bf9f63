using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop jobs`: the running and recent jobs of the cube, asked of every server through one front-end.</summary>
public static class JobsCommand
{
    public static Command Create() =>
        new Command("jobs", "List the running and recent jobs of the cube, whichever server coordinates them, newest first.")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("json", "Print as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        using var client = FrontEndAddress.Connect(args);
        var reply = FrontEndAddress.Call(() => client.Call(new JobsRequest()));
        var jobs = reply.Jobs;
        var unanswered = reply.Unanswered;
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new
            {
                frontend = client.Address,
                jobs = jobs.Select(j => new
                {
                    jobId = j.JobId,
                    job = j.Job,
                    input = j.Input,
                    reducers = j.Reducers,
                    mode = j.Mode,
                    state = j.State,
                    servers = j.Servers,
                    mapsDone = j.MapsDone,
                    shuffleBytes = j.ShuffleBytes,
                    reducesDone = j.ReducesDone,
                    submittedUnixMs = j.SubmittedUnixMs,
                    jobSeconds = j.JobSeconds,
                    shuffleReduceSeconds = j.ShuffleReduceSeconds,
                    failure = j.Failure,
                }),
                unanswered,
            });
            return 0;
        }
        Warn(unanswered);
        if (jobs.Count == 0)
        {
            Console.Out.WriteLine("no jobs");
            return 0;
        }
        Console.Out.WriteLine($"{"JOB ID",-16}  {"JOB",-12} {"INPUT",-16} {"R",4}  {"MODE",-7} {"STATE",-9}  {"PROGRESS",-36}  {"SUBMITTED (UTC)",-19}  TIME");
        foreach (var j in jobs)
        {
            string progress = string.Create(CultureInfo.InvariantCulture,
                $"map {j.MapsDone}/{j.Servers}, reduce {j.ReducesDone}/{j.Reducers}, {Units.Bytes(j.ShuffleBytes)}");
            string submitted = DateTimeOffset.FromUnixTimeMilliseconds(j.SubmittedUnixMs).UtcDateTime.ToString("yyyy-MM-dd HH:mm:ss", CultureInfo.InvariantCulture);
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{j.JobId,-16}  {Cut(j.Job, 12),-12} {Cut(j.Input, 16),-16} {j.Reducers,4}  {j.Mode,-7} {j.State,-9}  {progress,-36}  {submitted,-19}  {Units.Seconds(j.JobSeconds)}"));
        }
        return 0;
    }

    private static void Warn(IReadOnlyList<string> unanswered)
    {
        if (unanswered.Count > 0)
        {
            Console.Error.WriteLine($"warning: no answer in time from {string.Join(' ', unanswered)}; jobs they coordinate are missing");
        }
    }

    private static string Cut(string text, int width) => text.Length <= width ? text : string.Concat(text.AsSpan(0, width - 1), "~");
}
