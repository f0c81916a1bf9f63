using System.Globalization;
using System.Text;
using System.Text.Json;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Commands;

namespace Camdoop.Cli.Tests.Sim;

public class SimCommandTests
{
    [Fact]
    public void SimRunJsonReportsThePapersMetricsAndAVerifiedOutput()
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(
            "sim", "run", "--torus", "2x2x3", "--job", "synthetic", "--output-ratio", "0.5", "--reducers", "3",
            "--input-per-server", "40KB", "--verify", "--json");
        Assert.True(code == 0, stderr);
        using var doc = JsonDocument.Parse(stdout);
        var root = doc.RootElement;
        Assert.True(root.GetProperty("completed").GetBoolean());
        Assert.True(root.GetProperty("verified").GetBoolean());
        Assert.Equal(12, root.GetProperty("servers").GetInt32());
        Assert.Equal(3, root.GetProperty("reduceTasks").GetInt32());
        Assert.InRange(root.GetProperty("outputRatio").GetDouble(), 0.49, 0.51);
        Assert.True(root.GetProperty("shuffleReduceSeconds").GetDouble() > 0);
        var bounds = root.GetProperty("lowerBounds");
        Assert.True(bounds.GetProperty("switch1G").GetDouble() > bounds.GetProperty("switch6G").GetDouble());
        Assert.True(root.GetProperty("linkBytes").GetInt64() >= root.GetProperty("dataByteHops").GetInt64());
        var buffers = root.GetProperty("shuffleBufferPeakBytes");
        long min = buffers.GetProperty("min").GetInt64(), median = buffers.GetProperty("median").GetInt64(), max = buffers.GetProperty("max").GetInt64();
        Assert.True(max > 0 && min <= median && median <= max, $"shuffle buffer peaks {min} / {median} / {max}");
        // The wall-clock times name their machine.
        var machine = root.GetProperty("machine");
        Assert.False(string.IsNullOrWhiteSpace(machine.GetProperty("processor").GetString()));
        Assert.Equal(Environment.ProcessorCount, machine.GetProperty("logicalCores").GetInt32());
    }

    [Fact]
    public void MapOutputsInMemoryOrOnDiskGiveTheSameVerifiedRunAndAutoKeepsSmallOnesInMemory()
    {
        string[] run = ["sim", "run", "--torus", "2x2x3", "--reducers", "2", "--input-per-server", "60KB", "--verify", "--json"];
        var reports = new Dictionary<string, (bool OnDisk, double Seconds, long LinkBytes, long Events)>();
        foreach (string where in new[] { "disk", "memory", "auto" })
        {
            var (code, stdout, stderr) = CamdoopProcess.Run([.. run, "--map-output", where]);
            Assert.True(code == 0, stderr);
            using var doc = JsonDocument.Parse(stdout);
            var root = doc.RootElement;
            Assert.True(root.GetProperty("verified").GetBoolean(), where);
            reports[where] = (root.GetProperty("mapOutputOnDisk").GetBoolean(), root.GetProperty("shuffleReduceSeconds").GetDouble(),
                root.GetProperty("linkBytes").GetInt64(), root.GetProperty("events").GetInt64());
        }
        Assert.True(reports["disk"].OnDisk);
        Assert.False(reports["memory"].OnDisk);
        Assert.False(reports["auto"].OnDisk); // 720 KB of input: far under a sixteenth of any test machine's memory
        // Where the runs live is outside virtual time: the shuffle moves the same bytes in the same time.
        Assert.Equal(reports["disk"].LinkBytes, reports["memory"].LinkBytes);
        Assert.Equal(reports["disk"].Seconds, reports["memory"].Seconds);
        Assert.Equal(reports["memory"], reports["auto"]);
    }

    [Fact]
    public void MaxWindowReachesTheServiceAndTheOutputStaysExact()
    {
        // A 2x2x2 cube with noagg at S = 1: the root takes every record, so the window decides how much each child
        // may send ahead; a window of two segments must still give the verified output.
        string[] run = ["sim", "run", "--torus", "2x2x2", "--mode", "noagg", "--output-ratio", "1", "--input-per-server", "200KB", "--verify", "--json"];
        var (code, stdout, stderr) = CamdoopProcess.Run([.. run, "--max-window", "18KB"]);
        Assert.True(code == 0, stderr);
        using var small = JsonDocument.Parse(stdout);
        Assert.True(small.RootElement.GetProperty("verified").GetBoolean());
        (code, stdout, stderr) = CamdoopProcess.Run([.. run, "--max-window", "1MB"]);
        Assert.True(code == 0, stderr);
        using var large = JsonDocument.Parse(stdout);
        Assert.True(large.RootElement.GetProperty("verified").GetBoolean());
        // Fewer window updates with the larger window: the option really reached the transport.
        Assert.True(large.RootElement.GetProperty("ackFrames").GetInt64() < small.RootElement.GetProperty("ackFrames").GetInt64(),
            $"acks with 1MB {large.RootElement.GetProperty("ackFrames")} vs 18KB {small.RootElement.GetProperty("ackFrames")}");
        // Send buffers hold what the window lets a stream send ahead: the larger window needs more buffer memory.
        long PeakMax(JsonDocument d) => d.RootElement.GetProperty("shuffleBufferPeakBytes").GetProperty("max").GetInt64();
        Assert.True(PeakMax(large) > PeakMax(small), $"peak buffers with 1MB {PeakMax(large)} vs 18KB {PeakMax(small)}");
    }

    [Fact]
    public void TheShallowTreesMoveFewerByteHopsThanThePapersWithTheSameVerifiedOutput()
    {
        // noagg at S = 1 on 5x5x5: every record travels its full tree depth, so byte-hops follow the trees' depth.
        string[] run = ["sim", "run", "--torus", "5x5x5", "--mode", "noagg", "--output-ratio", "1", "--input-per-server", "20KB", "--verify", "--json"];
        var results = new Dictionary<string, JsonElement>();
        foreach (string trees in new[] { "paper", "shallow" })
        {
            var (code, stdout, stderr) = CamdoopProcess.Run([.. run, "--trees", trees]);
            Assert.True(code == 0, stderr);
            using var doc = JsonDocument.Parse(stdout);
            Assert.True(doc.RootElement.GetProperty("verified").GetBoolean());
            Assert.Equal(trees, doc.RootElement.GetProperty("trees").GetString());
            results[trees] = doc.RootElement.Clone();
        }
        Assert.Equal(results["paper"].GetProperty("outputBytes").GetInt64(), results["shallow"].GetProperty("outputBytes").GetInt64());
        long paper = results["paper"].GetProperty("dataByteHops").GetInt64();
        long shallow = results["shallow"].GetProperty("dataByteHops").GetInt64();
        Assert.True(shallow < paper * 0.9, $"byte-hops shallow {shallow} vs paper {paper}");
    }

    [Fact]
    public void SimRunOnAUsersFileWritesPartFilesThatMatchAPlainWordCount()
    {
        string dir = Path.Combine(Path.GetTempPath(), $"camdoop-cli-test-{Environment.ProcessId}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(dir);
        try
        {
            var rng = new Random(5);
            string[] vocabulary = ["torus", "camdoop", "shuffle", "reduce", "tree", "key", "frame", "link", "vertex", "root"];
            var text = new StringBuilder();
            var expected = new Dictionary<string, long>(StringComparer.Ordinal);
            for (int line = 0; line < 3000; line++)
            {
                int words = rng.Next(1, 12);
                for (int w = 0; w < words; w++)
                {
                    string word = vocabulary[rng.Next(vocabulary.Length)] + (rng.Next(4) == 0 ? rng.Next(50).ToString(CultureInfo.InvariantCulture) : "");
                    expected[word] = expected.GetValueOrDefault(word) + 1;
                    text.Append(word).Append(w + 1 < words ? ' ' : '\n');
                }
            }
            string input = Path.Combine(dir, "corpus.txt");
            File.WriteAllText(input, text.ToString());
            string output = Path.Combine(dir, "out");

            var (code, stdout, stderr) = CamdoopProcess.Run("sim", "run", "--torus", "3x3x3", "--job", "wordcount", "--input", input,
                "--reducers", "7", "--mode", "noagg", "--output", output);
            Assert.True(code == 0, stderr);
            // The text report names the machine its wall clock was measured on.
            Assert.Contains($"{Environment.ProcessorCount} logical cores", stdout.Split('\n').Single(l => l.StartsWith("machine", StringComparison.Ordinal)), StringComparison.Ordinal);

            var parts = Directory.GetFiles(output, "part-*").Order(StringComparer.Ordinal).ToArray();
            Assert.Equal(7, parts.Length);
            var actual = new Dictionary<string, long>(StringComparer.Ordinal);
            foreach (var part in parts)
            {
                string? previous = null;
                foreach (var line in File.ReadLines(part))
                {
                    var fields = line.Split('\t');
                    Assert.Equal(2, fields.Length);
                    Assert.True(previous is null || string.CompareOrdinal(previous, fields[0]) < 0, "keys in order within a part");
                    previous = fields[0];
                    Assert.True(actual.TryAdd(fields[0], long.Parse(fields[1], CultureInfo.InvariantCulture)), $"{fields[0]} in two parts");
                }
            }
            Assert.Equal(expected.OrderBy(e => e.Key, StringComparer.Ordinal), actual.OrderBy(e => e.Key, StringComparer.Ordinal));
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public void Figure10AndTable1WriteTheirFilesAndReportWhatThePaperReports()
    {
        string dir = Directory.CreateTempSubdirectory("camdoop-fig10-").FullName;
        try
        {
            var (code, stdout, stderr) = CamdoopProcess.Run("sim", "sweep", "--figure", "10", "--torus", "2x2x2", "--input-sizes", "4KB,8KB", "--out", dir);
            Assert.True(code == 0, stderr);
            Assert.Contains("4 KB per server: Camdoop ", stdout, StringComparison.Ordinal);
            Assert.Contains("8 KB per server: Camdoop ", stdout, StringComparison.Ordinal);
            var csv = File.ReadAllLines(Path.Combine(dir, "figure10.csv"));
            Assert.Equal(5, csv.Length);
            Assert.All(csv.Skip(1), line => Assert.StartsWith("Figure10,S=0, R=1,", line.Replace("\"", "", StringComparison.Ordinal), StringComparison.Ordinal));
            string chart = Path.Combine(dir, "figure-10-s-0-r-1.svg");
            Assert.Contains("Figure 10: S=0, R=1 (2x2x2)", File.ReadAllText(chart), StringComparison.Ordinal);

            // --chart-only runs nothing: it draws the same chart again from the CSV and leaves the CSV as it was.
            string drawn = File.ReadAllText(chart), table = File.ReadAllText(Path.Combine(dir, "figure10.csv"));
            File.Delete(chart);
            (code, stdout, stderr) = CamdoopProcess.Run("sim", "sweep", "--figure", "10", "--torus", "2x2x2", "--input-sizes", "4KB,8KB", "--out", dir, "--chart-only");
            Assert.True(code == 0, stderr);
            Assert.Equal($"wrote {chart}\nwrote {Path.ChangeExtension(chart, ".png")}", stdout.Trim());
            Assert.Equal(drawn, File.ReadAllText(chart));
            Assert.Equal(table, File.ReadAllText(Path.Combine(dir, "figure10.csv")));

            (code, stdout, stderr) = CamdoopProcess.Run("sim", "sweep", "--figure", "table1", "--torus", "2x2x2", "--input-per-server", "16KB", "--out", dir);
            Assert.True(code == 0, stderr);
            Assert.Contains("| outputs equal to the reference | 3/3 | 3/3 | 3/3 | 3/3 |", stdout, StringComparison.Ordinal);
            Assert.Equal(13, File.ReadAllLines(Path.Combine(dir, "table1.csv")).Length);
            Assert.Contains("| Camdoop, the paper | 14.08 |", File.ReadAllText(Path.Combine(dir, "table1.md")), StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public void SimRunConcurrentReportsEachJobsTimeAtOnceAndAloneWithVerifiedOutputs()
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(
            "sim", "run", "--torus", "3x3x3", "--job", "wordcount", "--reducers", "2", "--input-per-server", "20KB",
            "--concurrent", "2", "--placement", "vertical", "--verify", "--json");
        Assert.True(code == 0, stderr);
        using var doc = JsonDocument.Parse(stdout);
        var root = doc.RootElement;
        Assert.True(root.GetProperty("verified").GetBoolean());
        Assert.Equal("vertical", root.GetProperty("placement").GetString());
        var jobs = root.GetProperty("jobs").EnumerateArray().ToList();
        Assert.Equal(2, jobs.Count);
        var servers = new List<string>();
        foreach (var job in jobs)
        {
            Assert.True(job.GetProperty("verified").GetBoolean());
            double atOnce = job.GetProperty("shuffleReduceSeconds").GetDouble(), alone = job.GetProperty("aloneSeconds").GetDouble();
            Assert.True(atOnce > 0 && alone > 0);
            Assert.Equal(atOnce / alone, job.GetProperty("normalizedTime").GetDouble(), 12);
            var own = job.GetProperty("mapServers").EnumerateArray().Select(e => e.GetString()!).ToList();
            Assert.Equal(13, own.Count);
            Assert.All(job.GetProperty("roots").EnumerateArray(), r => Assert.Contains(r.GetString(), own));
            servers.AddRange(own);
        }
        Assert.Equal(26, servers.Distinct().Count());
        // Each job's time runs from its own shuffle's start, the run's from the first: it lasts until the last job ends.
        Assert.Equal(jobs.Max(j => j.GetProperty("startedAfterSeconds").GetDouble() + j.GetProperty("shuffleReduceSeconds").GetDouble()),
            root.GetProperty("shuffleReduceSeconds").GetDouble(), 9);
    }

    [Fact]
    public void SweepFigure8WritesEveryConfigurationForEachJobAsCsvAndSvg()
    {
        string dir = Directory.CreateTempSubdirectory("camdoop-figure8-").FullName;
        try
        {
            var (code, stdout, stderr) = CamdoopProcess.Run(
                "sim", "sweep", "--figure", "8", "--torus", "3x3x3", "--input-per-server", "20KB", "--verify", "--out", dir);
            Assert.True(code == 0, stderr);
            Assert.Contains("Figure 8 on 3x3x3", stdout, StringComparison.Ordinal);
            var lines = File.ReadAllLines(Path.Combine(dir, "figure8.csv"));
            Assert.Equal("placement,R,job,map_servers,intermediate_bytes,alone_s,together_s,normalized,completed,verified,simulation_cpu_s", lines[0]);
            var rows = lines.Skip(1).Select(l => l.Split(',')).ToList();
            // Horizontal at R=1 and R=27, vertical at R=1 and R=13 on 13 servers each: two jobs apiece, all verified.
            Assert.Equal(["horizontal/1", "horizontal/27", "vertical/1", "vertical/13"], rows.Select(r => $"{r[0]}/{r[1]}").Distinct());
            Assert.Equal(8, rows.Count);
            Assert.All(rows, r => Assert.Equal("True", r[9]));
            Assert.All(rows.Where(r => r[0] == "vertical"), r => Assert.Equal("13", r[3]));
            // Two jobs over every link at R=27 take far longer than one (at 20 KB a server, latency is a good part of it).
            Assert.All(rows.Where(r => r[1] == "27"), r => Assert.True(double.Parse(r[7], CultureInfo.InvariantCulture) > 1.25, r[7]));
            string svg = File.ReadAllText(Path.Combine(dir, "figure8.svg"));
            Assert.Contains("horizontal R=27", svg, StringComparison.Ordinal);
            Assert.Contains("paper (testbed, 27)", svg, StringComparison.Ordinal);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Theory]
    // 16x16x16 at R = N: about half a terabyte by the estimate, far beyond any test machine.
    [InlineData("sim run: 16x16x16 at R=4096 needs about", "sim", "run", "--torus", "16x16x16", "--reducers", "4096")]
    [InlineData("sim sweep: 16x16x16 at R=4096 needs about", "sim", "sweep", "--figure", "6", "--torus", "16x16x16", "--out", "/nonexistent/never-made")]
    public void ARunThatCannotFitInMemoryIsRefusedBeforeItStarts(string expected, params string[] args)
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(args);
        Assert.Equal(1, code);
        Assert.Equal("", stdout.Trim());
        var line = Assert.Single(stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.Contains(expected, line, StringComparison.Ordinal);
        Assert.Contains("--force", line, StringComparison.Ordinal);
        Assert.False(Directory.Exists("/nonexistent/never-made"));
    }

    [Theory]
    [InlineData(2, "sim", "run", "--reducers", "99")]
    [InlineData(2, "sim", "run", "--mode", "fast")]
    [InlineData(2, "sim", "run", "--bogus")]
    [InlineData(1, "sim", "run", "--job", "wordcount", "--input", "/nonexistent/corpus.txt")]
    [InlineData(2, "sim", "run", "--job", "median")]
    [InlineData(2, "sim", "run", "--max-window", "1KB")]
    [InlineData(2, "sim", "sweep", "--max-window", "lots")]
    [InlineData(2, "sim", "run", "--trees", "bushy")]
    [InlineData(2, "sim", "run", "--map-output", "tape")]
    [InlineData(2, "sim", "sweep", "--trees", "")]
    [InlineData(2, "sim", "sweep", "--figure", "10", "--input-sizes", "lots")]
    [InlineData(2, "sim", "sweep", "--figure", "10", "--input-sizes", "0KB")]
    [InlineData(2, "sim", "sweep", "--figure", "table1", "--torus", "2x2x2", "--reducers", "9")]
    [InlineData(2, "sim", "sweep", "--figure", "table1", "--chart-only")]
    [InlineData(1, "sim", "sweep", "--figure", "10", "--chart-only", "--out", "/nonexistent/never-made")]
    [InlineData(1, "sim", "sweep", "--figure", "8", "--chart-only", "--out", "/nonexistent/never-made")]
    [InlineData(1, "testbed", "bench", "table1", "--prefix", "zz9")]
    [InlineData(2, "testbed", "bench", "table1", "--runs", "0")]
    [InlineData(2, "sim", "run", "--concurrent", "2", "--fail", "root@0.5T")]
    [InlineData(2, "sim", "run", "--concurrent", "2", "--placement", "diagonal")]
    [InlineData(1, "sim", "run", "--concurrent", "3", "--placement", "vertical", "--servers-per-job", "10")]
    public void BadInvocationsFailWithOneClearLine(int expectedCode, params string[] args)
    {
        var (code, stdout, stderr) = CamdoopProcess.Run(args);
        Assert.Equal(expectedCode, code);
        Assert.Equal("", stdout.Trim());
        var lines = stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Single(lines);
        Assert.StartsWith("camdoop", lines[0], StringComparison.Ordinal);
    }

    [Fact]
    public void EveryCommandHasHelp()
    {
        var paths = new List<string[]>();
        void Walk(Command command, string[] path)
        {
            paths.Add(path);
            foreach (var sub in command.Subcommands)
            {
                Walk(sub, [.. path, sub.Name]);
            }
        }
        Walk(RootCommand.Create(), []);
        Assert.Contains(paths, p => p.SequenceEqual(new[] { "sim", "run" }));
        foreach (var path in paths)
        {
            var writer = new StringWriter();
            Assert.Equal(0, RootCommand.Create().Invoke([.. path, "--help"], writer));
            Assert.Contains($"Usage:\n  {string.Join(' ', ["camdoop", .. path])}", writer.ToString().Replace("\r\n", "\n", StringComparison.Ordinal), StringComparison.Ordinal);
        }
    }
}
