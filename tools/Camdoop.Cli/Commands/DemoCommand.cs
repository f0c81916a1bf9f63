using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Experiments;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Jobs.Control;

namespace Camdoop.Cli.Commands;

/// <summary>
/// `camdoop demo`: the README's first command. WordCount over a generated corpus on a simulated 3x3x3 CamCube,
/// once with on-path aggregation and once without, both checked against the single-process reference. The corpus's
/// most frequent words are English's, so its top words read like a word count.
/// </summary>
public static class DemoCommand
{
    public static Command Create() =>
        new Command("demo", "WordCount on a simulated 3x3x3 CamCube: top words, camdoop vs noagg shuffle+reduce time, bytes saved by aggregation.")
            .Option("torus", "Torus size", "XxYxZ", "3x3x3")
            .Option("input-per-server", "Generated text per server", "SIZE", "1MB")
            .Option("reducers", "Number of reduce tasks R", "R", "1")
            .Option("top", "How many top words to print", "N", "10")
            .Option("seed", "Random seed", "N", "1")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        var torus = CommonOptions.Torus(args);
        int top = args.Int("top", 1, 1000);
        string outputRoot = Path.Combine(Path.GetTempPath(), $"camdoop-demo-{Environment.ProcessId}");
        Console.Out.WriteLine($"Camdoop demo: WordCount on a simulated {torus} CamCube ({torus.Count} servers, 1 Gbps links, jumbo frames)");
        try
        {
            var results = new Dictionary<ShuffleMode, JobSimulationResult>();
            long bytesPerServer = args.Bytes("input-per-server");
            ulong seed = (ulong)args.Long("seed", 0);
            string corpus = WriteCorpus(Path.Combine(outputRoot, "corpus"), torus.Count, bytesPerServer, seed);
            var baseOptions = new JobSimulationOptions
            {
                Torus = torus,
                Workload = Workload.Files,
                Job = WordCountJob.JobName,
                InputPath = corpus,
                Settings = new SimulationSettings
                {
                    BytesPerServer = bytesPerServer,
                    Seed = seed,
                    Verify = true,
                },
                ReduceTasks = args.Int("reducers", 1, torus.Count),
                MapOutputOnDisk = true,
                SimulationThreads = 0,
            };
            // Both runs shuffle the same map outputs: generate and map once.
            using var input = SimRunCommand.Prepare(baseOptions, "map    ");
            foreach (var mode in new[] { ShuffleMode.Camdoop, ShuffleMode.NoAgg })
            {
                var options = baseOptions with
                {
                    Mode = mode,
                    OutputDirectory = Path.Combine(outputRoot, mode.Name()),
                };
                var result = SimRunCommand.Execute(options, mode.Name().PadRight(7), input);
                if (!result.Completed || result.Verified != true)
                {
                    throw new CliException($"demo: the {mode} run failed: {result.VerificationError ?? string.Join("; ", result.Errors)}");
                }
                results[mode] = result;
            }
            var agg = results[ShuffleMode.Camdoop];
            var noagg = results[ShuffleMode.NoAgg];
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"input {Units.Bytes(agg.InputBytes)} of text, intermediate {Units.Bytes(agg.IntermediateBytes)}, output {Units.Bytes(agg.OutputBytes)} ({agg.OutputRecords:N0} distinct words, S = {agg.OutputRatio:0.###})"));
            Console.Out.WriteLine();
            Console.Out.WriteLine($"Top {top} words (both runs identical to the single-process reference):");
            foreach (var (word, count) in TopWords(Path.Combine(outputRoot, ShuffleMode.Camdoop.Name()), top))
            {
                Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"  {word,-20} {count,12:N0}"));
            }
            Console.Out.WriteLine();
            Console.Out.WriteLine("                      shuffle+reduce     link bytes   data byte-hops");
            Row("Camdoop", agg);
            Row("Camdoop (no agg.)", noagg);
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"  Switch (1 Gbps) bound {Units.Seconds(agg.LowerBounds.Switch1G),10}   Switch (6 Gbps) bound {Units.Seconds(agg.LowerBounds.Switch6G)}"));
            double saved = 1 - ((double)agg.LinkBytes / noagg.LinkBytes);
            Console.Out.WriteLine();
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"On-path aggregation: {noagg.ShuffleReduceSeconds / agg.ShuffleReduceSeconds:0.##}x faster, {Units.Bytes(noagg.LinkBytes - agg.LinkBytes)} ({saved:P0}) fewer bytes on the links."));
            return 0;
        }
        finally
        {
            if (Directory.Exists(outputRoot))
            {
                Directory.Delete(outputRoot, recursive: true);
            }
        }
    }

    /// <summary>One file of English-like text per server, as `datagen` writes them.</summary>
    private static string WriteCorpus(string directory, int servers, long bytesPerServer, ulong seed)
    {
        Directory.CreateDirectory(directory);
        var text = new TextDataGenerator(servers, bytesPerServer, seed, commonWords: EnglishWords.ByFrequency);
        for (int s = 0; s < servers; s++)
        {
            File.WriteAllBytes(Path.Combine(directory, DatasetGenerator.FileName(s)), text.GenerateServer(s));
        }
        return directory;
    }

    private static void Row(string name, JobSimulationResult r) =>
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"  {name,-18} {Units.Seconds(r.ShuffleReduceSeconds),14} {Units.Bytes(r.LinkBytes),14} {Units.Bytes(r.DataByteHops),16}"));

    /// <summary>The most frequent words across the part files (key TAB count lines).</summary>
    private static List<(string Word, long Count)> TopWords(string directory, int top)
    {
        var words = new List<(string Word, long Count)>();
        foreach (var file in Directory.GetFiles(directory, "part-*"))
        {
            foreach (var line in File.ReadLines(file))
            {
                int tab = line.LastIndexOf('\t');
                if (tab > 0 && long.TryParse(line.AsSpan(tab + 1), NumberStyles.Integer, CultureInfo.InvariantCulture, out long count))
                {
                    words.Add((line[..tab], count));
                }
            }
        }
        return words.OrderByDescending(w => w.Count).ThenBy(w => w.Word, StringComparer.Ordinal).Take(top).ToList();
    }
}
