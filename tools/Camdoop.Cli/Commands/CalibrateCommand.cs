using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Experiments;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop calibrate`: measures this machine's map, merge and reduce rates for `--compute calibrated`.</summary>
public static class CalibrateCommand
{
    private static readonly Dictionary<string, Workload> Jobs = new(StringComparer.Ordinal)
    {
        ["synthetic"] = Workload.Synthetic,
        ["wordcount"] = Workload.WordCount,
        ["sort"] = Workload.Sort,
        ["topk"] = Workload.TopK,
    };

    public static Command Create() =>
        new Command("calibrate", "Measure how fast this machine maps, merges and reduces, for simulations with --compute calibrated.")
        {
            Details = "Runs the real code paths in process over generated data of the job: its map task over seven servers'\n" +
                      "inputs, a vertex's merge (and combine) of seven sorted streams per stripe, and a root's merge, reduce\n" +
                      "and output of the same streams. Each is timed in thread CPU time, --repeats times, and the median\n" +
                      "rate kept. Writes the rates (bits of input per second of one core, and this machine's cores for map\n" +
                      "tasks) as JSON to --out; sim run and sim sweep read it with --compute calibrated.",
        }
            .Option("job", "synthetic | wordcount | sort | topk", "JOB", "synthetic")
            .Option("input-per-server", "Generated input per server (seven servers' worth is used)", "SIZE", "4MB")
            .Option("repeats", "Times each measurement runs; the median is kept", "N", "5")
            .Option("out", "Rates file to write (default ~/.camdoop/compute-rates.json)", "FILE")
            .Flag("json", "Print the rates file's content")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        var workload = args.Choice("job", Jobs);
        long bytes = args.Bytes("input-per-server");
        if (bytes < 64 * 1024 || bytes > 256L * 1024 * 1024)
        {
            throw CliException.Usage("calibrate: --input-per-server must be between 64KB and 256MB");
        }
        int repeats = args.Int("repeats", 1, 100);
        string path = args.String("out") ?? ComputeModel.DefaultRatesPath;
        ComputeRatesFile rates;
        using (var bar = new ProgressBar("calibrate"))
        {
            int done = 0;
            rates = ComputeCalibration.Run(workload, bytes, repeats, new SynchronousProgress(status => bar.Report((double)++done / repeats, status)));
        }
        try
        {
            rates.Write(path);
        }
        catch (Exception ex) when (ex is IOException or UnauthorizedAccessException)
        {
            throw new CliException($"calibrate: cannot write '{path}': {ex.Message}");
        }
        if (args.Flag("json"))
        {
            Console.Out.Write(File.ReadAllText(path));
            return 0;
        }
        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"{rates.Job}: map {rates.MapBitsPerSecond / 1e9:0.00} Gbit/s per core ({rates.MapCores} cores), merge {rates.MergeBitsPerSecond / 1e9:0.00} Gbit/s, reduce {rates.ReduceBitsPerSecond / 1e9:0.00} Gbit/s"));
        Console.Out.WriteLine($"machine: {rates.Machine}");
        Console.Out.WriteLine($"wrote {path}");
        return 0;
    }

    /// <summary>Reports on the calling thread (Progress posts to the thread pool, which would draw out of order).</summary>
    private sealed class SynchronousProgress(Action<string> report) : IProgress<string>
    {
        public void Report(string value) => report(value);
    }
}
