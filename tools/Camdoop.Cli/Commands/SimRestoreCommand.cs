using System.Globalization;
using Camdoop.Cli.CommandLine;
using Camdoop.Experiments;
using Camdoop.Experiments.Reports;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Commands;

/// <summary>`camdoop sim restore`: the time to restore three replicas after a server dies, on a simulated cube.</summary>
public static class SimRestoreCommand
{
    public static Command Create() =>
        new Command("restore", "Kill a server of a simulated cube holding N bytes of chunks; time until every chunk has three replicas again: CSV and SVG.")
        {
            Details = "Every server runs the real chunk store with re-replication on; only chunks whose replica set includes\n" +
                      "--lost are written (--held bytes, in --chunk-size chunks; the files go under --data-root and are deleted\n" +
                      "after). Once every server has checked where its replicas belong, --lost fails; the run ends when every\n" +
                      "chunk has three live replicas where it is placed now, each with the right checksum. The time is split\n" +
                      "into detection, grace and copying, and the copying is set against the rate cap's bound (the bytes spread\n" +
                      "over the surviving holders, each at --rates) and the links' (the bytes over the holders' and the new\n" +
                      "positions' six links each). One run per --held and --rates pair; a rate of 0 is no cap.",
        }
            .Option("torus", "Torus size", "XxYxZ", "8x8x8")
            .Option("lost", "The server that dies", "X,Y,Z", "1,1,1")
            .Option("held", "Bytes of chunks the lost server holds, comma-separated (one run each)", "LIST", "256MB,512MB,1GB")
            .Option("chunk-size", "Bytes per chunk", "SIZE", "64MB")
            .Option("rates", "Re-replication rate caps per server, bytes a second, comma-separated (0: no cap)", "LIST", "50MB,0")
            .Option("concurrency", "Replica copies a server sends at once", "N", "2")
            .Option("grace", "How long a server must be unreachable before its replicas are made again", "DURATION", "10s")
            .Option("link-rate-gbps", "Link rate in Gbit/s", "RATE", "1")
            .Option("seed", "Random seed", "N", "1")
            .Option("data-root", "Directory under which the chunk stores write their files; without it, the system temp directory", "DIR")
            .Option("out", "Directory for restore.csv, restore.svg and restore.png (default sweeps/restore-<torus>)", "DIR")
            .Handle(Run);

    private static int Run(ParsedArguments args)
    {
        var torus = CommonOptions.Torus(args);
        if (!Coordinate.TryParse(args.Required("lost"), out var lost) || !torus.Contains(lost))
        {
            throw CliException.Usage($"sim restore: --lost must be a server of the {torus} torus, like 1,1,1");
        }
        if (torus.Count < 4)
        {
            throw CliException.Usage("sim restore: the torus needs at least 4 servers");
        }
        var held = Sizes(args, "held", v => v >= 1);
        var rates = Sizes(args, "rates", v => v >= 0);
        long chunk = args.Bytes("chunk-size");
        if (chunk is < 1 or > ChunkStore.ChunkMeta.MaxChunkBytes)
        {
            throw CliException.Usage("sim restore: --chunk-size must be between 1 byte and 1GB");
        }
        if (held.Any(h => h / chunk > 100_000))
        {
            throw CliException.Usage("sim restore: more than 100,000 chunks in one run; give a larger --chunk-size");
        }
        long grace = args.Nanoseconds("grace");
        if (grace is < 1_000_000 or > 3_600_000_000_000)
        {
            throw CliException.Usage("sim restore: --grace must be between 1ms and 3600s");
        }
        string? dataRoot = args.String("data-root");
        if (dataRoot is not null && !Directory.Exists(dataRoot))
        {
            throw CliException.Usage($"sim restore: --data-root {dataRoot} is not a directory");
        }
        var baseOptions = new RestoreExperimentOptions
        {
            Torus = torus,
            Lost = lost,
            HeldBytes = held[0],
            ChunkBytes = chunk,
            Concurrency = args.Int("concurrency", 1, 64),
            Grace = grace,
            LinkRateBitsPerSecond = (long)(args.Double("link-rate-gbps", 0.001, 400) * 1e9),
            Seed = (ulong)args.Long("seed", 0),
            DataRoot = dataRoot,
        };
        string outDir = args.String("out") ?? Path.Combine("sweeps", $"restore-{torus}");
        Directory.CreateDirectory(outDir);

        var runs = held.SelectMany(h => rates.Select(r => baseOptions with { HeldBytes = h, RateBytesPerSecond = r })).ToList();
        var results = new List<RestoreExperimentResult>();
        var wall = System.Diagnostics.Stopwatch.StartNew();
        using (var bar = new ProgressBar("sim restore"))
        {
            foreach (var run in runs)
            {
                string label = $"{results.Count + 1}/{runs.Count} {Units.Bytes(run.HeldBytes)}, {Cap(run.RateBytesPerSecond)}";
                bar.Report((double)results.Count / runs.Count, label);
                results.Add(RestoreExperiment.Run(run, new Progress<string>(p => bar.Report((double)results.Count / runs.Count, $"{label}: {p}"))));
            }
            bar.Report(1, $"{runs.Count} runs");
        }
        string csv = Path.Combine(outDir, "restore.csv");
        ToCsv(results).Save(csv);
        string svg = Path.Combine(outDir, "restore.svg");
        var charts = Chart(results, torus).Save(svg);

        Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
            $"Restore on a simulated {torus} ({torus.Count} servers, {baseOptions.LinkRateBitsPerSecond / 1e9:0.###} Gbps links), server {lost} lost, {Units.Bytes(chunk)} chunks, grace {Units.Seconds(grace / 1e9)}, {runs.Count} runs in {wall.Elapsed.TotalSeconds:0.#} s"));
        Console.Out.WriteLine($"{"held",9} {"cap",10} {"chunks",6} {"holders",7} {"senders",7} {"receivers",9} {"detect",9} {"grace",9} {"copy",9} {"total",9} {"cap bound",9} {"link bound",10} {"copy/bound",10} {"ok",3}");
        foreach (var r in results)
        {
            Console.Out.WriteLine(string.Create(CultureInfo.InvariantCulture,
                $"{Units.Bytes(r.Bytes),9} {Cap(r.Options.RateBytesPerSecond),10} {r.Chunks,6} {r.Holders,7} {r.Senders.Count,7} {r.Receivers,9} {Units.Seconds(r.DetectionSeconds),9} {Units.Seconds(r.GraceSeconds),9} {Units.Seconds(r.CopySeconds),9} {Units.Seconds(r.TotalSeconds),9} {Units.Seconds(r.CapBoundSeconds),9} {Units.Seconds(r.LinkBoundSeconds),10} {r.CopySeconds / r.BoundSeconds,9:0.00}x {(r.Restored ? "yes" : "NO"),3}"));
        }
        Console.Out.WriteLine($"wrote {csv}");
        Console.Out.WriteLine($"wrote {string.Join(", ", charts)}");
        return results.All(r => r.Restored) ? 0 : 1;
    }

    private static string Cap(long rate) => rate == 0 ? "no cap" : Units.Bytes(rate) + "/s";

    internal static CsvTable ToCsv(IEnumerable<RestoreExperimentResult> results)
    {
        var table = new CsvTable("torus", "lost", "held_bytes", "chunk_bytes", "chunks", "lost_was_primary", "rate_cap_bytes_per_s", "concurrency", "grace_s",
            "holders", "senders", "receivers", "max_sender_bytes", "detection_s", "grace_phase_s", "copy_s", "total_s",
            "cap_bound_s", "cap_bound_as_sent_s", "link_bound_s", "copy_over_bound", "copies_confirmed", "copies_failed",
            "sender_waiting_s", "sender_copying_s", "busiest_link_utilisation", "links_used", "good_chunks", "restored");
        foreach (var r in results)
        {
            var o = r.Options;
            table.Add(o.Torus.ToString(), o.Lost.ToString(), r.Bytes, o.ChunkBytes, r.Chunks, r.LostWasPrimary, o.RateBytesPerSecond, o.Concurrency, o.Grace / 1e9,
                r.Holders, r.Senders.Count, r.Receivers, r.Senders.Count == 0 ? 0 : r.Senders.Max(s => s.Bytes),
                Round(r.DetectionSeconds), Round(r.GraceSeconds), Round(r.CopySeconds), Round(r.TotalSeconds),
                Round(r.CapBoundSeconds), Round(r.CapBoundAsSentSeconds), Round(r.LinkBoundSeconds), Round(r.CopySeconds / r.BoundSeconds), r.CopiesConfirmed, r.CopiesFailed,
                Round(r.SenderWaitingSeconds), Round(r.SenderCopyingSeconds), Round(r.BusiestLinkUtilisation), r.LinksUsed, r.GoodChunks, r.Restored ? 1 : 0);
        }
        return table;
    }

    private static double Round(double v) => Math.Round(v, 4);

    private static BarChart Chart(IReadOnlyList<RestoreExperimentResult> results, Torus torus)
    {
        var held = results.Select(r => r.Options.HeldBytes).Distinct().ToList();
        var rates = results.Select(r => r.Options.RateBytesPerSecond).Distinct().ToList();
        var chart = new BarChart
        {
            Title = $"Copy phase of the restore after a server dies, {torus}",
            YLabel = "seconds (simulated)",
            Categories = held.Select(h => Units.Bytes(h)).ToList(),
        };
        RestoreExperimentResult? Of(long h, long rate) => results.FirstOrDefault(r => r.Options.HeldBytes == h && r.Options.RateBytesPerSecond == rate);
        foreach (long rate in rates)
        {
            chart.Series.Add(new BarSeries($"copy, {Cap(rate)}", held.Select(h => Of(h, rate)?.CopySeconds ?? double.NaN).ToList()));
        }
        foreach (long rate in rates.Where(r => r > 0))
        {
            chart.Series.Add(new BarSeries($"bound, {Cap(rate)}", held.Select(h => Of(h, rate)?.BoundSeconds ?? double.NaN).ToList(), Reference: true));
        }
        chart.Series.Add(new BarSeries("bound, links", held.Select(h => results.First(r => r.Options.HeldBytes == h).LinkBoundSeconds).ToList(), Reference: true));
        return chart;
    }

    private static List<long> Sizes(ParsedArguments args, string option, Func<long, bool> valid)
    {
        var values = new List<long>();
        foreach (var part in args.Required(option).Split(',', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries))
        {
            if (!Units.TryParseBytes(part, out long v))
            {
                throw CliException.Usage($"sim restore: --{option} has a bad size '{part}' (like 64MB, 1GB or 1048576)");
            }
            if (!valid(v))
            {
                throw CliException.Usage($"sim restore: --{option} value '{part}' is out of range");
            }
            if (!values.Contains(v))
            {
                values.Add(v);
            }
        }
        return values.Count > 0 ? values : throw CliException.Usage($"sim restore: --{option} is empty");
    }
}
