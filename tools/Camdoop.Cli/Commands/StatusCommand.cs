using System.Buffers;
using System.Globalization;
using System.Text;
using System.Text.Json;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop status JOB`: a job's state, progress, times and output.</summary>
public static class StatusCommand
{
    public static Command Create() =>
        new Command("status", "Show a job's state, progress, times and output location (through any server's front-end).")
            .Argument("job", "Job id")
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Flag("wait", "Wait for the job to finish")
            .Flag("json", "Print as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        string jobId = args.Argument("job")!;
        using var client = FrontEndAddress.Connect(args);
        var status = args.Flag("wait")
            ? SubmitCommand.WaitForJob(client, jobId)
            : FrontEndAddress.Call(() => client.Call(new JobStatusRequest { JobId = jobId }));
        if (args.Flag("json"))
        {
            WriteJson(status, client.Address);
        }
        else
        {
            WriteText(status);
        }
        return status.State is "failed" or "killed" ? 1 : 0;
    }

    internal static void WriteJson(JobStatusReply status, string frontEnd) => Console.Out.WriteLine(ToJson(status, frontEnd));

    /// <summary>
    /// The reply's fields under their wire names, in wire order, then "frontend": "failure" always (null while the job
    /// has not failed), "outputDataset" only when the output is a dataset.
    /// </summary>
    internal static string ToJson(JobStatusReply s, string frontEnd)
    {
        ArgumentNullException.ThrowIfNull(s);
        var buffer = new ArrayBufferWriter<byte>();
        using (var json = new Utf8JsonWriter(buffer, new JsonWriterOptions { Indented = true }))
        {
            json.WriteStartObject();
            json.WriteString("jobId", s.JobId);
            json.WriteString("job", s.Job);
            json.WriteString("input", s.Input);
            json.WriteNumber("reducers", s.Reducers);
            json.WriteString("mode", s.Mode);
            json.WriteString("trees", s.Trees);
            json.WriteString("state", s.State);
            json.WriteNumber("servers", s.Servers);
            json.WriteNumber("mapsDone", s.MapsDone);
            json.WriteNumber("mapTasks", s.MapTasks);
            json.WriteNumber("inputBytes", s.InputBytes);
            json.WriteNumber("intermediateBytes", s.IntermediateBytes);
            json.WriteNumber("shuffleBytes", s.ShuffleBytes);
            json.WriteNumber("reducesDone", s.ReducesDone);
            json.WriteNumber("jobSeconds", s.JobSeconds);
            json.WriteNumber("mapSeconds", s.MapSeconds);
            json.WriteNumber("shuffleReduceSeconds", s.ShuffleReduceSeconds);
            json.WriteString("failure", s.Failure);
            if (s.OutputDataset is { } dataset)
            {
                json.WriteString("outputDataset", dataset);
            }
            json.WriteStartArray("outputs");
            foreach (var o in s.Outputs)
            {
                json.WriteStartObject();
                json.WriteNumber("reduceTask", o.ReduceTask);
                json.WriteString("server", o.Server);
                json.WriteString("path", o.Path);
                json.WriteString("chunk", o.Chunk);
                json.WriteNumber("records", o.Records);
                json.WriteNumber("bytes", o.Bytes);
                json.WriteEndObject();
            }
            json.WriteEndArray();
            json.WriteStartArray("failures");
            foreach (var f in s.Failures)
            {
                json.WriteStartObject();
                json.WriteString("server", f.Server);
                json.WriteNumber("detectedAtSeconds", f.DetectedAtSeconds);
                json.WriteNumber("detectedAtUnixMs", f.DetectedAtUnixMs);
                json.WriteString("during", f.During);
                json.WriteEndObject();
            }
            json.WriteEndArray();
            json.WriteStartObject("recovery");
            json.WriteNumber("resentBytes", s.Recovery.ResentBytes);
            json.WriteNumber("mapTasksRerun", s.Recovery.MapTasksRerun);
            json.WriteNumber("verticesAdopted", s.Recovery.VerticesAdopted);
            json.WriteEndObject();
            json.WriteString("coordinator", s.Coordinator);
            json.WriteNumber("attempt", s.Attempt);
            json.WriteString("frontend", frontEnd);
            json.WriteEndObject();
        }
        return Encoding.UTF8.GetString(buffer.WrittenSpan);
    }

    internal static void WriteText(JobStatusReply s)
    {
        ArgumentNullException.ThrowIfNull(s);
        string state = s.State;
        var outputs = s.Outputs;
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"job {s.JobId}: {s.Job} on '{s.Input}', R={s.Reducers}, mode {s.Mode}, {s.Trees} trees: {state}"));
        if (s.Coordinator.Length > 0)
        {
            Console.Out.WriteLine(s.Attempt > 0
                ? $"  coordinated by {s.Coordinator}, attempt {s.Attempt + 1} (started over on the servers left)"
                : $"  coordinated by {s.Coordinator}");
        }
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  map {s.MapsDone}/{s.Servers} servers ({s.MapTasks} map tasks, {Units.Bytes(s.InputBytes)} in, {Units.Bytes(s.IntermediateBytes)} intermediate), " +
            $"shuffled {Units.Bytes(s.ShuffleBytes)}, reduce {s.ReducesDone}/{s.Reducers}"));
        foreach (var f in s.Failures)
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  server {f.Server} lost at {Units.Seconds(f.DetectedAtSeconds)} while {f.During}"));
        }
        if (s.Failures.Count > 0 || s.Recovery.ResentBytes > 0)
        {
            var r = s.Recovery;
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  recovery: {Units.Count(r.MapTasksRerun, "map task")} run again, {Units.Count(r.VerticesAdopted, "vertex", "vertices")} taken over, {Units.Bytes(r.ResentBytes)} sent again"));
        }
        if (state is "failed" or "killed")
        {
            Console.Out.WriteLine($"  {state}: {s.Failure}");
            return;
        }
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  job time {Units.Seconds(s.JobSeconds)}, map {Units.Seconds(s.MapSeconds)}, shuffle and reduce {Units.Seconds(s.ShuffleReduceSeconds)}"));
        if (state != "done")
        {
            return;
        }
        if (s.OutputDataset is { } dataset)
        {
            Console.Out.WriteLine($"  output: dataset '{dataset}' in the chunk store ({outputs.Count} chunks, each reducer its primary replica); read it with 'camdoop get {dataset}' or 'camdoop cat {s.JobId}'");
        }
        else
        {
            Console.Out.WriteLine($"  output: {outputs.Count} part files on the reducers' local disks; print them with 'camdoop cat {s.JobId}'");
            foreach (var o in outputs.Take(8))
            {
                Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                    $"    part {o.ReduceTask}: server {o.Server}, {o.Path}, {o.Records} records, {Units.Bytes(o.Bytes)}"));
            }
            if (outputs.Count > 8)
            {
                Console.Out.WriteLine($"    ... {outputs.Count - 8} more");
            }
        }
    }
}
