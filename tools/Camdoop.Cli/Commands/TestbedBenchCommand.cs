using System.Globalization;
using Camdoop.ChunkStore;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Testbed;
using Camdoop.Experiments;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;
using Camdoop.MapReduce.Reference;
using Camdoop.MapReduce.Trees;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop testbed bench table1`: the paper's Table 1 on a testbed that is up, every output checked against the reference.</summary>
public static class TestbedBenchCommand
{
    public static Command Create() =>
        new Command("bench", "Benchmarks on a testbed that is up.")
            .Add(Table1Command());

    private static Command Table1Command() =>
        new Command("table1", "Run the paper's Table 1 on the testbed: Sort and WordCount at R=1 and R=N, with and without aggregation; CSV and Markdown.")
        {
            Details = "Generates Indy sort records and Zipf text (--input-per-server each), stores them (skipped when a dataset of\n" +
                      "that name and size is there already), then submits every job, R and mode in turn, --runs times each, reads\n" +
                      "every output back and checks it against the single-process reference. Shape the testbed's links (testbed up\n" +
                      "--link-rate) so that they, not the machine's cores, bound the shuffle. Exit 1 when an output differs.",
        }
            .Option(FrontEndAddress.Option, "Front-end address (default: the front-end of the testbed --prefix)", "HOST:PORT")
            .Option(ClientCredentials.Option, ClientCredentials.Help, "DIR")
            .Option("prefix", "The testbed whose front-end to use when --frontend is not given", "NAME", TestbedState.DefaultPrefix)
            .Option("input-per-server", "Generated input per server, for each of the two jobs", "SIZE", "1MB")
            .Option("reducers", "R values, comma-separated (default 1,N)", "LIST")
            .Option("runs", "Runs of every job, R and mode (the table shows the median)", "N", "1")
            .Option("trees", CommonOptions.TreesHelp, "FAMILY", "shallow")
            .Option("seed", "Random seed of the generated inputs", "N", "1")
            .Option("out", "Directory for table1.csv and table1.md (default bench/table1-<prefix>)", "DIR")
            .Handle(RunTable1);

    private static int RunTable1(ParsedArguments args)
    {
        string prefix = args.Required("prefix");
        long bytes = args.Bytes("input-per-server");
        if (bytes < 1024)
        {
            throw CliException.Usage("testbed bench table1: --input-per-server must be at least 1KB");
        }
        int runs = args.Int("runs", 1, 1000);
        ulong seed = (ulong)args.Long("seed", 0);
        string trees = args.Choice("trees", TreeFamilyNames.All).Name();
        string outDir = args.String("out") ?? Path.Combine("bench", $"table1-{prefix}");
        string address = args.String(FrontEndAddress.Option)
            ?? TestbedState.TryLoad(prefix)?.FrontEnd
            ?? throw new CliException($"testbed bench table1: no testbed '{prefix}' is up (bring one up with 'camdoop testbed up', or give --frontend)");

        FrontEndClient client;
        try
        {
            client = FrontEndClient.Connect(address, ClientCredentials.Resolve(args, address));
        }
        catch (FrontEndException e)
        {
            throw new CliException(e.Message);
        }
        using (client)
        {
            var hello = FrontEndAddress.Call(() => client.Call(new HelloRequest()));
            int servers = (int)hello.Servers;
            var reducers = ParseReducers(args, servers);
            Directory.CreateDirectory(outDir);

            // The two inputs, generated here and stored in the cube (or found there from an earlier run).
            var inputs = new Dictionary<string, (string Dataset, byte[] Data)>(StringComparer.Ordinal);
            foreach (string job in Table1.Jobs)
            {
                var kind = job == "sort" ? DatasetKind.Sort : DatasetKind.Text;
                var generator = new DatasetGenerator(new DatasetOptions { Kind = kind, Servers = servers, BytesPerServer = bytes, Seed = seed });
                byte[] data;
                using (var bar = new ProgressBar($"generating {job} input"))
                {
                    var parts = new List<byte[]>();
                    for (int s = 0; s < servers; s++)
                    {
                        parts.Add(generator.GenerateServer(s));
                        bar.Report((double)(s + 1) / servers, $"{s + 1}/{servers} servers");
                    }
                    data = parts.SelectMany(p => p).ToArray();
                }
                string dataset = string.Create(CultureInfo.InvariantCulture, $"table1-{job}-{bytes}-{seed}");
                var existing = FrontEndAddress.Call(() => client.Call(new LsRequest())).Datasets.FirstOrDefault(d => d.Name == dataset);
                if (existing is null || existing.Bytes != data.Length)
                {
                    if (existing is not null)
                    {
                        throw new CliException($"testbed bench table1: dataset '{dataset}' exists with {existing.Bytes} bytes, not {data.Length}");
                    }
                    string file = Path.Combine(outDir, $"{dataset}.input");
                    File.WriteAllBytes(file, data);
                    try
                    {
                        PutCommand.Store(client, file, dataset, job == "sort" ? DatasetFormat.Records : DatasetFormat.Text, job == "sort" ? 100 : 0, 64L << 20);
                    }
                    finally
                    {
                        File.Delete(file);
                    }
                }
                inputs[job] = (dataset, data);
            }

            var rows = new List<Table1Row>();
            int total = Table1.Jobs.Length * reducers.Count * Table1.Modes.Length * runs, done = 0;
            foreach (string job in Table1.Jobs)
            {
                var (dataset, data) = inputs[job];
                foreach (int r in reducers)
                {
                    IMapReduceJob reference = job == "sort" ? new SortJob() : new WordCountJob();
                    var expected = ReferenceMapReduce.Run(reference, [data], r);
                    byte[] expectedBytes = Enumerable.Range(0, r).SelectMany(expected.Format).ToArray();
                    for (int run = 1; run <= runs; run++)
                    {
                        foreach (var mode in Table1.Modes)
                        {
                            string modeName = mode.Name();
                            Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                                $"[{done + 1}/{total}] {job} R={r} {FigureSweep.ModeName(mode)}, run {run} of {runs}"));
                            string jobId = FrontEndAddress.Call(() => client.Call(new SubmitRequest
                            {
                                Job = job,
                                Input = dataset,
                                Reducers = r,
                                Mode = modeName,
                                Trees = trees,
                            })).JobId;
                            var status = SubmitCommand.WaitForJob(client, jobId);
                            if (status.State != "done")
                            {
                                throw new CliException($"testbed bench table1: job {jobId} ({job} R={r} {modeName}) {status.State}: {status.Failure}");
                            }
                            using var output = new MemoryStream();
                            for (long t = 0; t < status.Reducers; t++)
                            {
                                FrontEndAddress.Call(() => client.Call(new JobPartRequest { JobId = jobId, ReduceTask = t }, part => output.Write(part.Data.Span)));
                            }
                            bool verified = output.GetBuffer().AsSpan(0, (int)output.Length).SequenceEqual(expectedBytes);
                            rows.Add(new Table1Row(job, r, modeName, status.ShuffleReduceSeconds, status.InputBytes, status.IntermediateBytes, output.Length,
                                status.ShuffleBytes, verified, status.JobSeconds, run));
                            done++;
                            Console.Error.WriteLine(string.Create(CultureInfo.InvariantCulture,
                                $"[{done}/{total}] {job} R={r} {FigureSweep.ModeName(mode)}: shuffle and reduce {status.ShuffleReduceSeconds:0.###} s, job {status.JobSeconds:0.###} s, output {(verified ? "equal to" : "DIFFERENT from")} the reference"));
                        }
                    }
                }
            }

            string csv = Path.Combine(outDir, "table1.csv");
            Table1.ToCsv(rows).Save(csv);
            string md = Path.Combine(outDir, "table1.md");
            string table = Table1.ToMarkdown(rows, "testbed");
            File.WriteAllText(md, table);
            var state = TestbedState.FindByFrontEnd(client.Address);
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"Table 1 on the {hello.Torus} cube at {client.Address} ({Units.Bytes(bytes)} per server and job, links {state?.LinkRate ?? "unshaped or unknown"}, {trees} trees, {runs} run(s) each)"));
            Console.Out.Write(table);
            Console.Out.WriteLine($"wrote {csv}");
            Console.Out.WriteLine($"wrote {md}");
            var wrong = rows.Where(r => !r.Verified).ToList();
            if (wrong.Count > 0)
            {
                Console.Error.WriteLine($"camdoop: testbed bench table1: {wrong.Count} of {rows.Count} outputs differ from the reference (first: {wrong[0].Job} R={wrong[0].ReduceTasks} {wrong[0].Mode})");
                return 1;
            }
            return 0;
        }
    }

    private static List<int> ParseReducers(ParsedArguments args, int servers)
    {
        if (!args.Has("reducers"))
        {
            return servers == 1 ? [1] : [1, servers];
        }
        var list = new List<int>();
        foreach (string part in args.Required("reducers").Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!int.TryParse(part, NumberStyles.Integer, CultureInfo.InvariantCulture, out int r) || r < 1 || r > servers)
            {
                throw CliException.Usage($"testbed bench table1: --reducers value '{part}' is not between 1 and {servers}");
            }
            list.Add(r);
        }
        return list.Count > 0 ? list.Distinct().ToList() : throw CliException.Usage("testbed bench table1: --reducers is empty");
    }
}
