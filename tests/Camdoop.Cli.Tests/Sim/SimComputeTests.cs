using System.Text.Json;
using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.Sim;

/// <summary>
/// `--compute` on `sim run` and `sim sweep`, and `calibrate`: the modes reach the simulation, a calibrated rates
/// file round-trips, and a bad mode or a missing or corrupt rates file is one line, never a stack trace.
/// </summary>
public sealed class SimComputeTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-compute-").FullName;

    [Fact]
    public void PaperComputeSlowsAReducerBoundRunAndReportsItsRates()
    {
        string[] run = ["sim", "run", "--torus", "2x2x2", "--output-ratio", "1", "--input-per-server", "200KB", "--verify", "--json"];
        var off = CliRunner.Run(run);
        var paper = CliRunner.Run([.. run, "--compute", "paper"]);
        Assert.True(off.ExitCode == 0, off.ToString());
        Assert.True(paper.ExitCode == 0, paper.ToString());
        using var offJson = JsonDocument.Parse(off.Stdout);
        using var paperJson = JsonDocument.Parse(paper.Stdout);
        Assert.False(offJson.RootElement.TryGetProperty("compute", out _));
        var root = paperJson.RootElement;
        Assert.True(root.GetProperty("verified").GetBoolean());
        var compute = root.GetProperty("compute");
        Assert.Equal("paper", compute.GetProperty("mode").GetString());
        Assert.Equal(3.15, compute.GetProperty("reduceGbps").GetDouble(), 6);
        // At S = 1 and R = 1 the root reduces everything at 3.15 Gbit/s, more slowly than its six links (6 Gbit/s) bring
        // it in: its core is the busiest, and busy nearly all the time.
        Assert.InRange(compute.GetProperty("busiestServerBusyFraction").GetDouble(), 0.9, 1.0);
        Assert.True(root.GetProperty("shuffleReduceSeconds").GetDouble() > offJson.RootElement.GetProperty("shuffleReduceSeconds").GetDouble());
    }

    [Fact]
    public void TwoReducerBoundJobsAtOnceTakeLittleLongerThanOne()
    {
        // Figure 8's horizontal R=1 point (the paper: at most 1.07x): each job is bound by its own root's reduce at
        // 3.15 Gbit/s, the roots are apart, and the links have room for both.
        var result = CliRunner.Run("sim", "run", "--torus", "3x3x3", "--output-ratio", "1", "--input-per-server", "1MB",
            "--concurrent", "2", "--compute", "paper", "--verify", "--json");
        Assert.True(result.ExitCode == 0, result.ToString());
        using var json = JsonDocument.Parse(result.Stdout);
        var jobs = json.RootElement.GetProperty("jobs").EnumerateArray().ToList();
        Assert.Equal(2, jobs.Count);
        foreach (var job in jobs)
        {
            Assert.True(job.GetProperty("verified").GetBoolean());
            Assert.InRange(job.GetProperty("normalizedTime").GetDouble(), 0.99, 1.1);
        }
        Assert.Equal("paper", json.RootElement.GetProperty("compute").GetProperty("mode").GetString());
    }

    [Fact]
    public void CalibrateWritesARatesFileThatSimRunReads()
    {
        string rates = Path.Combine(_directory, "rates.json");
        var calibrate = CliRunner.Run("calibrate", "--input-per-server", "64KB", "--repeats", "1", "--out", rates);
        Assert.True(calibrate.ExitCode == 0, calibrate.ToString());
        using (var file = JsonDocument.Parse(File.ReadAllText(rates)))
        {
            foreach (string rate in new[] { "mapBitsPerSecond", "mergeBitsPerSecond", "reduceBitsPerSecond" })
            {
                Assert.True(file.RootElement.GetProperty(rate).GetDouble() > 0, rate);
            }
        }
        var run = CliRunner.Run("sim", "run", "--torus", "2x2x2", "--input-per-server", "40KB", "--verify", "--json",
            "--compute", "calibrated", "--compute-rates", rates);
        Assert.True(run.ExitCode == 0, run.ToString());
        using var json = JsonDocument.Parse(run.Stdout);
        Assert.Equal("calibrated", json.RootElement.GetProperty("compute").GetProperty("mode").GetString());
        Assert.True(json.RootElement.GetProperty("verified").GetBoolean());
    }

    [Fact]
    public void AnUnknownModeIsAUsageError()
    {
        foreach (string[] command in new[] { new[] { "sim", "run" }, new[] { "sim", "sweep", "--figure", "10", "--torus", "2x2x2" } })
        {
            var result = CliRunner.Run([.. command, "--compute", "fast"]);
            Assert.True(result.ExitCode == 2, result.ToString());
            string line = Assert.Single(result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
            Assert.Contains("--compute must be one of off, paper, calibrated, not 'fast'", line, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void RatesWithoutCalibratedAreAUsageError()
    {
        var result = CliRunner.Run("sim", "run", "--compute", "paper", "--compute-rates", Path.Combine(_directory, "x.json"));
        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Contains("--compute-rates needs --compute calibrated", Assert.Single(result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries)), StringComparison.Ordinal);
    }

    [Fact]
    public void AFrameCostWithoutComputeIsOneLine()
    {
        var result = CliRunner.Run("sim", "run", "--frame-cost", "10us");
        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Contains("--frame-cost needs --compute paper or --compute calibrated", Assert.Single(result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries)), StringComparison.Ordinal);
    }

    [Fact]
    public void AMissingRatesFileIsOneLine()
    {
        string missing = Path.Combine(_directory, "missing.json");
        OneLineError.Assert(CliRunner.Run("sim", "run", "--compute", "calibrated", "--compute-rates", missing),
            $"compute rates file '{missing}' does not exist (make it with camdoop calibrate)");
    }

    [Theory]
    [InlineData("not json at all", "is not a rates file")]
    [InlineData("{\"job\": \"synthetic\"}", "is not a rates file")]
    [InlineData("{\"job\": \"synthetic\", \"mapBitsPerSecond\": 1e9, \"mapCores\": 2, \"mergeBitsPerSecond\": 0, \"reduceBitsPerSecond\": 1e9}", "not positive")]
    [InlineData("null", "is empty")]
    public void ACorruptRatesFileIsOneLine(string content, string expected)
    {
        string path = Path.Combine(_directory, "rates.json");
        File.WriteAllText(path, content);
        OneLineError.Assert(CliRunner.Run("sim", "run", "--compute", "calibrated", "--compute-rates", path), expected);
        OneLineError.Assert(CliRunner.Run("sim", "sweep", "--figure", "10", "--torus", "2x2x2", "--compute", "calibrated", "--compute-rates", path), expected);
    }

    public void Dispose() => Directory.Delete(_directory, recursive: true);
}
