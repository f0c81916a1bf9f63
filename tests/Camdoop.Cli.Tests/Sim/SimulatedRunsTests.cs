using System.Globalization;
using System.Text.Json;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>
/// A fixed set of simulated runs, one per network, mode and kind of failure, gives what it gave when it was recorded
/// (simulated-runs.tsv, written by scripts/record-simulated-runs.py): the same event trace hash, simulated time,
/// link bytes and frames, events and output. A change to how the simulator or the service carries bytes (buffers,
/// copies, threads) must leave every one unchanged; each output is also checked against the reference MapReduce.
/// </summary>
public sealed class SimulatedRunsTests
{
    private static readonly string[] Compared =
        ["eventTraceHash", "shuffleReduceSeconds", "linkBytes", "linkFrames", "events", "dataBytesSent", "outputBytes", "outputRecords", "checksums"];

    public static TheoryData<string> Runs()
    {
        var data = new TheoryData<string>();
        foreach (var row in Table().Rows)
        {
            data.Add(row["name"]);
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Runs))]
    public void EveryRecordedRunGivesWhatItGaveWhenRecorded(string name)
    {
        var recorded = Table().Rows.Single(r => r["name"] == name);
        string[] args = ["sim", "run", .. recorded["args"].Split(' ', StringSplitOptions.RemoveEmptyEntries), "--trace-hash", "--verify", "--json"];
        var (code, stdout, stderr) = CamdoopProcess.RunNiced(args);
        Assert.True(code == 0, stderr);
        using var doc = JsonDocument.Parse(stdout);
        var report = doc.RootElement;
        Assert.True(report.GetProperty("verified").GetBoolean(), report.GetProperty("verificationError").ToString());
        var now = Measured(report);
        var differences = Compared.Where(c => now[c] != recorded[c]).Select(c => $"{c}: recorded {recorded[c]}, now {now[c]}").ToList();
        Assert.True(differences.Count == 0, $"{name} changed: {string.Join("; ", differences)}");
    }

    [Fact]
    public void TheRecordCoversEveryNetworkAndFailureKind()
    {
        var args = Table().Rows.Select(r => r["args"]).ToList();
        foreach (string network in new[] { "switch", "racks", "netagg", "grin" })
        {
            Assert.Contains(args, a => a.Contains($"--network {network}", StringComparison.Ordinal));
        }
        Assert.Contains(args, a => !a.Contains("--network", StringComparison.Ordinal) && a.Contains("--mode noagg", StringComparison.Ordinal));
        Assert.Contains(args, a => a.Contains("--push", StringComparison.Ordinal));
        foreach (string failure in new[] { "random@", "root@", "link:", "coordinator@" })
        {
            Assert.Contains(args, a => a.Contains($"--fail {failure}", StringComparison.Ordinal));
        }
        Assert.All(Table().Rows, r => Assert.Matches("^[0-9a-f]{16}$", r["eventTraceHash"]));
    }

    private static Dictionary<string, string> Measured(JsonElement report)
    {
        var reducers = report.GetProperty("reducers").EnumerateArray().Select(r => r.GetProperty("checksum").GetString()!).ToList();
        string Long(string p) => report.GetProperty(p).GetInt64().ToString(CultureInfo.InvariantCulture);
        return new Dictionary<string, string>
        {
            ["eventTraceHash"] = report.GetProperty("eventTraceHash").GetString()!,
            // As Python writes a double (the shortest text that reads back the same), which .NET's "R" also gives.
            ["shuffleReduceSeconds"] = report.GetProperty("shuffleReduceSeconds").GetDouble().ToString("R", CultureInfo.InvariantCulture),
            ["linkBytes"] = Long("linkBytes"),
            ["linkFrames"] = Long("linkFrames"),
            ["events"] = Long("events"),
            ["dataBytesSent"] = Long("dataBytesSent"),
            ["outputBytes"] = Long("outputBytes"),
            ["outputRecords"] = Long("outputRecords"),
            ["checksums"] = reducers.Count > 0 ? string.Join(' ', reducers) : Long("outputBytes"),
        };
    }

    private static (string[] Columns, List<Dictionary<string, string>> Rows) Table()
    {
        var lines = File.ReadAllLines(Path.Combine(AppContext.BaseDirectory, "Sim", "simulated-runs.tsv"))
            .Where(l => l.Length > 0 && !l.StartsWith('#')).ToList();
        string[] columns = lines[0].Split('\t');
        var rows = lines.Skip(1).Select(l => l.Split('\t'))
            .Select(cells => columns.Zip(cells).ToDictionary(p => p.First, p => p.Second)).ToList();
        return (columns, rows);
    }
}
