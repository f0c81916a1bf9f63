using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Trees;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop submit`: runs a MapReduce job on the cube through a front-end.</summary>
public static class SubmitCommand
{
    public static Command Create() =>
        new Command("submit", "Submit a job to a front-end: the job is broadcast over the torus, mapped at the input's primary replicas, shuffled over the trees.")
        {
            Details = "With --wait a progress bar shows the map phase, the bytes shuffled and the reduce tasks done, then the\n" +
                      "output location, the job time and the shuffle-and-reduce time (from the end of the map phase, the Camdoop paper, §5.1).",
        }
            .Option(FrontEndAddress.Option, "Front-end address (default: the testbed's)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Option("job", "Built-in job (wordcount, sort, topk?k=N, median, synthetic) or NAME.dll#Type (an assembly in the servers' job assembly directory)", "JOB")
            .Option("mapper", "A streaming job instead of --job: the mapper, an executable of the servers' job assembly directory that turns input lines into key<TAB>value lines", "CMD")
            .Option("reducer", "The streaming job's reducer: an executable of the servers' job assembly directory that reads key<TAB>value lines sorted by key", "CMD")
            .Option("combiner", "The streaming job's combiner, run like the reducer over each map task's sorted output before the shuffle", "CMD")
            .Option("input", "Input dataset", "NAME")
            .Option("reducers", "Reduce tasks R", "R", "1")
            .Option("mode", "camdoop (on-path aggregation), noagg (the paper's Camdoop (no agg.)) or tcp (TCP Camdoop: straight to the reducers over the switch network)", "MODE", "camdoop")
            .Option("trees", CommonOptions.TreesHelp, "FAMILY", "shallow")
            .Option("output", "Store the output in the chunk store as this dataset (default: each reducer's local disk)", "NAME")
            .Flag("replicate-output", "Each reducer streams its output, as it writes it, to the server its task would start over on, so a failed root goes on from that copy")
            .Option("parallel-fetches", "Mode tcp: streams each reducer admits at once, as Hadoop's parallel copies (default: as many initial windows as the switch buffer holds)", "N")
            .Flag("push", "Mode tcp: every sender pushes at once, unadmitted (the incast-prone baseline)")
            .Flag("wait", "Wait for the job to finish, with a progress bar")
            .Flag("json", "Print the result as JSON (with the jobId)")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        if (args.Flag("push") && args.Has("parallel-fetches"))
        {
            throw CliException.Usage("submit: --parallel-fetches bounds admitted streams; --push admits none");
        }
        string job = JobText(args);
        var request = new SubmitRequest
        {
            Job = Names.JobProblem(job) is { } problem
                ? throw CliException.Usage($"submit: {Names.Quote(job)} is not a valid job: {problem}")
                : job,
            Input = CommonOptions.DatasetName(args, args.Required("input"), "input dataset name"),
            Reducers = args.Int("reducers", 1, 1 << 20),
            Mode = args.Choice("mode", ShuffleModes.All).Name(),
            Output = args.String("output") is { } output ? CommonOptions.DatasetName(args, output, "output dataset name") : null,
            Trees = args.Choice("trees", TreeFamilyNames.All).Name(),
            ReplicateOutput = args.Flag("replicate-output"),
            ParallelFetches = args.Has("parallel-fetches") ? args.Int("parallel-fetches", 1, ushort.MaxValue) : null,
            Push = args.Flag("push"),
        };
        bool json = args.Flag("json");
        using var client = FrontEndAddress.Connect(args);
        string jobId = FrontEndAddress.Call(() => client.Call(request)).JobId;
        if (!args.Flag("wait"))
        {
            if (json)
            {
                JsonOutput.Write(Console.Out, new { jobId, frontend = client.Address, state = "submitted" });
            }
            else
            {
                Console.Out.WriteLine($"job {jobId} submitted to {client.Address}; follow it with 'camdoop status {jobId}'");
            }
            return 0;
        }
        var status = WaitForJob(client, jobId);
        if (json)
        {
            StatusCommand.WriteJson(status, client.Address);
        }
        else
        {
            StatusCommand.WriteText(status);
        }
        if (status.State is "failed" or "killed")
        {
            // The report went to stdout; the reason is also the one error line, for whoever reads only stderr.
            Console.Error.WriteLine($"camdoop: job {jobId} {status.State}: {status.Failure}");
        }
        return status.State == "done" ? 0 : 1;
    }

    /// <summary>--job, or the streaming job that --mapper and --reducer name (files of the servers' job assembly directory).</summary>
    private static string JobText(ParsedArguments args)
    {
        if (!args.Has("mapper") && !args.Has("reducer") && !args.Has("combiner"))
        {
            return args.Required("job");
        }
        if (args.Has("job") || !args.Has("mapper") || !args.Has("reducer"))
        {
            throw CliException.Usage("submit: give --job, or a streaming job's --mapper CMD and --reducer CMD (and maybe --combiner CMD)");
        }
        try
        {
            return StreamingJob.Spec(args.Required("mapper"), args.Required("reducer"), args.String("combiner")).ToString();
        }
        catch (JobLoadException e)
        {
            throw CliException.Usage($"submit: {e.Message}");
        }
    }

    /// <summary>Polls the job until it is done, failed or killed, drawing its progress.</summary>
    internal static JobStatusReply WaitForJob(FrontEndClient client, string jobId)
    {
        using var bar = new ProgressBar("job");
        while (true)
        {
            JobStatusReply status;
            try
            {
                status = client.Call(new JobStatusRequest { JobId = jobId });
            }
            catch (FrontEndException e) when (e.ConnectionLost)
            {
                throw new CliException(FrontEndAddress.LostWhileWaiting(client.Address, jobId, e));
            }
            catch (FrontEndException e)
            {
                throw new CliException(e.Message);
            }
            string state = status.State;
            long servers = status.Servers;
            long maps = status.MapsDone;
            long reducers = status.Reducers;
            long reduces = status.ReducesDone;
            // Map counts for a third of the bar, shuffle and reduce for the rest.
            double fraction = (0.33 * maps / servers) + (0.67 * reduces / reducers);
            bar.Report(state is "done" or "failed" or "killed" ? 1 : fraction, string.Create(CultureInfo.InvariantCulture,
                $"map {maps * 100 / servers}%, shuffle {Units.Bytes(status.ShuffleBytes)}, reduce {reduces * 100 / reducers}%"));
            if (state is "done" or "failed" or "killed")
            {
                return status;
            }
            Thread.Sleep(200);
        }
    }
}
