using Camdoop.Cli.Commands;
using Camdoop.Cli.Tests.Support;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Tests.CommandLine;

/// <summary>`camdoop limit` and `sim run --limit`: bad values are one clear line and exit 2 before anything connects or runs.</summary>
public sealed class LimitCommandTests
{
    [Theory]
    [InlineData(new[] { "--rate", "50mbit" }, "limit: give one of --service SERVICE, --job JOBID or --list")]
    [InlineData(new[] { "--service", "camdoop", "--job", "0000000000000001", "--rate", "50mbit" }, "limit: give one of --service")]
    [InlineData(new[] { "--service", "camdoop" }, "limit: give --rate RATE (e.g. 50mbit), or --clear")]
    [InlineData(new[] { "--service", "camdoop", "--rate", "fast" }, "limit: --rate 'fast' is not a rate")]
    [InlineData(new[] { "--service", "camdoop", "--rate", "50mb" }, "limit: --rate '50mb' is not a rate")]
    [InlineData(new[] { "--service", "camdoop", "--rate", "-5mbit" }, "limit: --rate '-5mbit' is not a rate")]
    [InlineData(new[] { "--service", "camdoop", "--rate", "0mbit" }, "limit: --rate '0mbit' is not a rate")]
    [InlineData(new[] { "--service", "camdoop", "--rate", "9tbit" }, "limit: --rate '9tbit' is not a rate")]
    [InlineData(new[] { "--service", "camdoop", "--clear", "--rate", "5mbit" }, "limit: --clear lifts a limit; leave out --rate")]
    [InlineData(new[] { "--job", "xyz", "--rate", "5mbit" }, "limit: --job 'xyz' is not a job id (16 hex digits)")]
    [InlineData(new[] { "--job", "00000000000000001", "--rate", "5mbit" }, "is not a job id")]
    [InlineData(new[] { "--service", "camdoop", "--rate", "5mbit", "--port", "+W" }, "limit: --port '+W' is not a port")]
    [InlineData(new[] { "--service", "camdoop", "--rate", "5mbit", "--servers", "1,2" }, "limit: --servers: '1,2' is not a server")]
    [InlineData(new[] { "--list", "--service", "camdoop" }, "limit: --list takes no --service")]
    [InlineData(new[] { "--job", "0000000000000001", "--rate", "5mbit", "--when", "select port from links every 1s" }, "limit: --when QUERY and --above X go together")]
    [InlineData(new[] { "--job", "0000000000000001", "--rate", "5mbit", "--when", "select port from links", "--above", "1" }, "limit: --when: malformed query")]
    [InlineData(new[] { "--job", "0000000000000001", "--rate", "5mbit", "--when", "select port from links every 1s", "--above", "many" }, "limit: --above 'many' is not a number")]
    public void BadValuesAreOneLineBeforeConnecting(string[] args, string expected)
    {
        // No front-end listens on port 9 of this address: a run that got past the checks would fail differently.
        var result = CliRunner.Run(["limit", .. args, "--frontend", "127.0.0.1:9"]);
        Assert.True(result.ExitCode == 2, result.ToString());
        string line = Assert.Single(result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
        Assert.StartsWith("camdoop: ", line, StringComparison.Ordinal);
        Assert.Contains(expected, line, StringComparison.Ordinal);
    }

    [Fact]
    public void AGoodLimitGoesOnToConnect()
    {
        var result = CliRunner.Run("limit", "--service", "camdoop", "--rate", "50mbit", "--servers", "0,0,0;1,1,1", "--port", "+X,-Y", "--frontend", "127.0.0.1:9");
        // Past every check, it fails only at the connection (or the key) with one line and exit 1.
        Assert.True(result.ExitCode == 1, result.ToString());
        Assert.Single(result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
    }

    [Theory]
    [InlineData("service=camdoop", "give rate=RATE")]
    [InlineData("service=chunk-store,rate=10mbit", "unknown service 'chunk-store'")]
    [InlineData("service=link-monitor,rate=10mbit", "service 'link-monitor' cannot be rate-limited: the cube is managed through it")]
    [InlineData("service=1,rate=10mbit", "service 'key-routing' cannot be rate-limited")]
    [InlineData("service=monitor,rate=10mbit", "service 'monitor' cannot be rate-limited")]
    [InlineData("rate=10mbit", "give service=NAME|ID or job=K")]
    [InlineData("job=1,rate=10mbit", "job=1: give the copy's number, 0 to 0")]
    [InlineData("job=0,rate=10mbit,port=up", "'up' is not a port")]
    [InlineData("service=camdoop,rate=10mbit,servers=3,0,0", "'3,0,0' is not a server of the 2x2x2 torus")]
    [InlineData("service=camdoop,rate=10mbit,colour=red", "unknown field 'colour'")]
    public void ABadSimulatorLimitIsOneLineBeforeTheJobRuns(string limit, string expected)
    {
        var result = CliRunner.Run("sim", "run", "--torus", "2x2x2", "--input-per-server", "1KB", "--limit", limit);
        Assert.True(result.ExitCode == 2, result.ToString());
        string line = Assert.Single(result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries | StringSplitOptions.TrimEntries));
        Assert.Contains($"sim run: --limit '{limit}': {expected}", line, StringComparison.Ordinal);
        Assert.DoesNotContain("map:", result.Stderr, StringComparison.Ordinal);
    }

    [Fact]
    public void SimRunReportsItsLimitsAndTheJobStillVerifies()
    {
        var result = CliRunner.Run("sim", "run", "--torus", "2x2x2", "--input-per-server", "20KB", "--verify",
            "--limit", "service=camdoop,rate=50mbit,port=+X;-X,servers=0,0,0;1,1,1", "--limit", "job=0,rate=1gbit");
        Assert.True(result.ExitCode == 0, result.ToString());
        Assert.Contains("Rate limit: service camdoop at 50 Mbit/s on +X -X of 0,0,0 1,1,1", result.Stdout, StringComparison.Ordinal);
        Assert.Contains("Rate limit: job ", result.Stdout, StringComparison.Ordinal);
        Assert.Contains("at 1 Gbit/s on every port of every server", result.Stdout, StringComparison.Ordinal);
        Assert.Contains("verified against reference        yes", result.Stdout, StringComparison.Ordinal);
    }

    private static QueryPart Round(params string[][] rows) => new()
    {
        Round = 1,
        Columns = ["port", "busy"],
        Rows = [.. rows.Select(r => r.ToList())],
    };

    [Fact]
    public void ThePolicyFiresOnTheLargestValueOfTheLastColumnAboveItsThreshold()
    {
        var policy = new LimitPolicy(1000);
        Assert.False(policy.Triggers(Round(["+X", "10"], ["-X", "1000"]), out double value));
        Assert.Equal(1000, value);
        Assert.True(policy.Triggers(Round(["+X", "10"], ["-X", "1000.5"], ["+Y", "3"]), out value));
        Assert.Equal(1000.5, value);
        // Rows without a number there are passed over; a round with none never fires.
        Assert.True(policy.Triggers(Round(["+X", "null"], ["-X", "2e3"]), out value));
        Assert.Equal(2000, value);
        Assert.False(policy.Triggers(Round(["+X", "null"]), out value));
        Assert.True(double.IsNaN(value));
        Assert.False(policy.Triggers(Round(), out _));
    }
}
