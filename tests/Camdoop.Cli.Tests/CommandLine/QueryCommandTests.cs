using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.CommandLine;

/// <summary>Bad monitoring queries, to `camdoop query` and to `sim run --query`: one clear line, exit 2, nothing runs.</summary>
public sealed class QueryCommandTests
{
    [Theory]
    [InlineData("select port from flows every 1s", "unknown table 'flows'")]
    [InlineData("select colour from links", "unknown column 'colour' in table links")]
    [InlineData("select colour from links every 1s", "unknown column 'colour' in table links")]
    public void ABadQueryIsOneLineBeforeConnecting(string query, string expected)
    {
        // No front-end listens on port 9 of this address: a run that got past the check would fail differently.
        var result = CliRunner.Run("query", query, "--frontend", "127.0.0.1:9", "--once");
        AssertUsageLine(result, "camdoop: query: " + expected);
    }

    [Fact]
    public void AStandingQueryNeedsAnIntervalButOneRoundDoesNot()
    {
        var standing = CliRunner.Run("query", "select * from links", "--frontend", "127.0.0.1:9");
        AssertUsageLine(standing, "camdoop: query: malformed query at character 20: expected 'every' before the interval (every 1s), found the end of the query (with --once or --rounds N it may be left out)");

        // With --once the query gets past the check (with every 1s) and on to the front-end, which is not there.
        foreach (string[] rounds in (string[][])[["--once"], ["--rounds", "3"]])
        {
            var once = CliRunner.Run(["query", "select * from links", "--frontend", "127.0.0.1:9", .. rounds]);
            Assert.True(once.ExitCode == 1, once.ToString());
            Assert.DoesNotContain("malformed", once.Stderr, StringComparison.Ordinal);
            Assert.Single(once.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        }
    }

    [Fact]
    public void ABadSimulatorQueryIsOneLineBeforeTheJobRuns()
    {
        var result = CliRunner.Run("sim", "run", "--torus", "2x2x2", "--input-per-server", "1KB", "--query", "select sum(port) from links every 1s");
        AssertUsageLine(result, "--query: sum(port): 'port' is text; only count can take it");
        Assert.DoesNotContain("map:", result.Stderr, StringComparison.Ordinal);
    }

    [Fact]
    public void SimRunPrintsEveryRoundOfAQuery()
    {
        string directory = Directory.CreateTempSubdirectory("camdoop-query-").FullName;
        var result = CliRunner.Run("sim", "run", "--torus", "2x2x2", "--input-per-server", "2KB", "--query", "select count(*) as links from links where up = 1 every 1ms", "--query-for", "2500us", "--query-out", directory);
        Assert.True(result.ExitCode == 0, result.ToString());
        var csv = File.ReadAllLines(Path.Combine(directory, "query-1.csv"));
        Assert.Equal("round,started_ms,latency_us,servers,links", csv[0]);
        Assert.All(csv.Skip(1), line => Assert.EndsWith(",8,48", line, StringComparison.Ordinal));
        Assert.True(csv.Length >= 4, string.Join('\n', csv));
        Assert.Contains("<svg", File.ReadAllText(Path.Combine(directory, "query-1.svg")), StringComparison.Ordinal);
        Assert.True(File.Exists(Path.Combine(directory, "query-1.png")));
        Directory.Delete(directory, recursive: true);
        Assert.Contains("query from 0,0,0: select count(*) as links from links where up = 1 every 1ms", result.Stdout, StringComparison.Ordinal);
        // Every link of the 2x2x2 cube is up: 8 servers x 6 ports.
        Assert.Contains("round 2 at 1 ms: 8 servers", result.Stdout, StringComparison.Ordinal);
        Assert.Matches(@"\n\s+links\n\s+48\n", result.Stdout);
    }

    private static void AssertUsageLine(CliResult result, string expected)
    {
        Assert.True(result.ExitCode == 2, result.ToString());
        var lines = result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries);
        string line = Assert.Single(lines);
        Assert.Contains(expected, line, StringComparison.Ordinal);
    }
}
