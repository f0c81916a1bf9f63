using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.MapReduce.DataGen;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop datagen`: writes one input file per server for a built-in job.</summary>
public static class DatagenCommand
{
    private static readonly Dictionary<string, DatasetKind> Kinds = new(StringComparer.Ordinal)
    {
        ["synthetic"] = DatasetKind.Synthetic,
        ["sort"] = DatasetKind.Sort,
        ["text"] = DatasetKind.Text,
        ["topk"] = DatasetKind.TopK,
    };

    public static Command Create() =>
        new Command("datagen", "Generate input data for N servers: synthetic at output ratio S, Indy sort records, text, or top-k lines.")
        {
            Details = "Writes server-NNNNN.input files. For synthetic data it reports the output ratio S it achieved\n" +
                      "(S = output size / intermediate size; 0 means every key is common to all servers, 1 all keys unique).",
        }
            .Option("kind", "synthetic | sort | text | topk", "KIND", "synthetic")
            .Option("servers", "Number of servers (or use --torus)", "N")
            .Option("torus", "Torus size, sets the number of servers", "XxYxZ")
            .Option("output-ratio", "Output ratio S for synthetic data, 0..1", "S", "0.5")
            .Option("input-per-server", "Input bytes per server", "SIZE", "2MB")
            .Option("seed", "Random seed", "N", "1")
            .Option("out", "Output directory", "DIR", "datasets")
            .Flag("json", "Print the summary as JSON")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        int servers = args.Has("servers") ? args.Int("servers", 1, 1_000_000)
            : args.Has("torus") ? CommonOptions.Torus(args).Count
            : throw CliException.Usage("datagen: give --servers N or --torus XxYxZ");
        var options = new DatasetOptions
        {
            Kind = args.Choice("kind", Kinds),
            Servers = servers,
            BytesPerServer = args.Bytes("input-per-server"),
            Seed = (ulong)args.Long("seed", 0),
            OutputRatio = args.Double("output-ratio", 0, 1),
        };
        DatasetSummary summary;
        try
        {
            var generator = new DatasetGenerator(options);
            using var bar = new ProgressBar("generating");
            summary = generator.WriteFiles(args.Required("out"), new Progress<int>(done => bar.Report((double)done / servers, $"{done}/{servers} servers")));
        }
        catch (ArgumentException ex)
        {
            throw new CliException($"datagen: {ex.Message}");
        }
        if (args.Flag("json"))
        {
            JsonOutput.Write(Console.Out, new
            {
                kind = options.Kind.ToString().ToLowerInvariant(),
                job = summary.JobName,
                servers,
                directory = Path.GetFullPath(args.Required("out")),
                totalBytes = summary.TotalBytes,
                requestedOutputRatio = options.Kind == DatasetKind.Synthetic ? options.OutputRatio : (double?)null,
                achievedOutputRatio = summary.AchievedOutputRatio,
            });
        }
        else
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"wrote {servers} files, {Units.Bytes(summary.TotalBytes)} of {summary.JobName} input to {Path.GetFullPath(args.Required("out"))}"));
            if (summary.AchievedOutputRatio is double s)
            {
                Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture, $"output ratio S: requested {options.OutputRatio:0.###}, achieved {s:0.####}"));
            }
        }
        return 0;
    }
}
