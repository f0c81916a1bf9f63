using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.MapReduce.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop status JOB`: a job's state, progress, times and output.</summary>
public static class StatusCommand
{
    public static Command Create() =>
        new Command("status", "Show a job's state, progress, times and output location (ask the front-end it was submitted to).")
            .Argument("job", "Job id")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Flag("wait", "Wait for the job to finish")
            .Flag("json", "Print as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string jobId = args.Argument("job")!;
        using var client = FrontEndAddress.Connect(args);
        var status = args.Flag("wait")
            ? SubmitCommand.WaitForJob(client, jobId)
            : FrontEndAddress.Call(() => client.Call(new WireMessage("job-status") { { "jobId", jobId } }));
        if (args.Flag("json"))
        {
            WriteJson(status, client.Address);
        }
        else
        {
            WriteText(status);
        }
        return status.GetString("state") == "failed" ? 1 : 0;
    }

    internal static void WriteJson(WireMessage status, string frontEnd)
    {
        status["frontend"] = frontEnd;
        status.Set("id", null).Set("ok", null);
        var copy = new WireMessage();
        foreach (var (k, v) in status)
        {
            if (v is not null || k is "failure")
            {
                copy[k] = v;
            }
        }
        Console.Out.WriteLine(WireJson.ToJson(copy));
    }

    internal static void WriteText(WireMessage s)
    {
        string state = s.GetString("state");
        var outputs = s.GetList("outputs").Cast<WireMessage>().ToList();
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"job {s.GetString("jobId")}: {s.GetString("job")} on '{s.GetString("input")}', R={s.GetInt64("reducers")}, mode {s.GetString("mode")}: {state}"));
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  map {s.GetInt64("mapsDone")}/{s.GetInt64("servers")} servers ({s.GetInt64("mapTasks")} map tasks, {Units.Bytes(s.GetInt64("inputBytes"))} in, {Units.Bytes(s.GetInt64("intermediateBytes"))} intermediate), " +
            $"shuffled {Units.Bytes(s.GetInt64("shuffleBytes"))}, reduce {s.GetInt64("reducesDone")}/{s.GetInt64("reducers")}"));
        if (state == "failed")
        {
            Console.Out.WriteLine($"  failed: {s.GetOptionalString("failure")}");
            return;
        }
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  job time {Units.Seconds(s.GetDouble("jobSeconds"))}, map {Units.Seconds(s.GetDouble("mapSeconds"))}, shuffle and reduce {Units.Seconds(s.GetDouble("shuffleReduceSeconds"))}"));
        if (state != "done")
        {
            return;
        }
        if (s.GetOptionalString("outputDataset") is { } dataset)
        {
            Console.Out.WriteLine($"  output: dataset '{dataset}' in the chunk store ({outputs.Count} chunks, each reducer its primary replica); read it with 'camdoop get {dataset}' or 'camdoop cat {s.GetString("jobId")}'");
        }
        else
        {
            Console.Out.WriteLine($"  output: {outputs.Count} part files on the reducers' local disks; print them with 'camdoop cat {s.GetString("jobId")}'");
            foreach (var o in outputs.Take(8))
            {
                Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"    part {o.GetInt64("reduceTask")}: server {o.GetString("server")}, {o.GetOptionalString("path")}, {o.GetInt64("records")} records, {Units.Bytes(o.GetInt64("bytes"))}"));
            }
            if (outputs.Count > 8)
            {
                Console.Out.WriteLine($"    ... {outputs.Count - 8} more");
            }
        }
    }
}
