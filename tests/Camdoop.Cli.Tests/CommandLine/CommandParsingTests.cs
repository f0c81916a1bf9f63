using Camdoop.Cli.CommandLine;

namespace Camdoop.Cli.Tests.CommandLine;

public class CommandParsingTests
{
    /// <summary>A root with one command of every kind of option, which hands what it parsed to <paramref name="capture"/>.</summary>
    internal static Command Sample(Action<ParsedArguments> capture) =>
        new Command("camdoop", "root").Add(
            new Command("run", "runs")
                .Option("torus", "size", "XxYxZ", "3x3x3")
                .Option("input-per-server", "bytes", "SIZE", "2MB")
                .Option("link-delay", "delay", "DURATION")
                .Option("query", "a query, repeatable", "QUERY")
                .Flag("json", "json output")
                .Argument("name", "a name", required: false)
                .Handle(p =>
                {
                    capture(p);
                    return 0;
                }));

    [Fact]
    public void ParsesOptionsFlagsDefaultsAndUnits()
    {
        ParsedArguments? seen = null;
        int code = Sample(p => seen = p).Invoke(["run", "job1", "--json", "--link-delay", "50us", "--input-per-server=20KB"], TextWriter.Null);
        Assert.Equal(0, code);
        Assert.NotNull(seen);
        Assert.Equal("job1", seen.Argument("name"));
        Assert.True(seen.Flag("json"));
        Assert.Equal("3x3x3", seen.String("torus"));
        Assert.Equal(20 * 1024, seen.Bytes("input-per-server"));
        Assert.Equal(50_000, seen.Nanoseconds("link-delay"));
    }

    [Fact]
    public void ARepeatedOptionKeepsEveryValueAndReadsAsTheLast()
    {
        ParsedArguments? seen = null;
        Sample(p => seen = p).Invoke(["run", "--torus", "2x2x2", "--torus=4x4x4"], TextWriter.Null);
        Assert.NotNull(seen);
        Assert.Equal("4x4x4", seen.String("torus"));
        Assert.Equal(new[] { "2x2x2", "4x4x4" }, seen.Strings("torus"));
        Assert.Empty(seen.Strings("input-per-server"));
        Assert.True(seen.Has("input-per-server"));
        Assert.False(seen.Has("link-delay"));
    }

    [Fact]
    public void AFlagCanBeTurnedOffAndIsOffWhenAbsent()
    {
        ParsedArguments? seen = null;
        Sample(p => seen = p).Invoke(["run", "--json=false"], TextWriter.Null);
        Assert.False(seen!.Flag("json"));
        Assert.True(seen.Has("json"));
        Sample(p => seen = p).Invoke(["run"], TextWriter.Null);
        Assert.False(seen.Flag("json"));
        Assert.False(seen.Has("json"));
    }

    [Fact]
    public void AfterADoubleDashAWordStartingWithDashesIsAnArgument()
    {
        ParsedArguments? seen = null;
        Sample(p => seen = p).Invoke(["run", "--json", "--", "--job1"], TextWriter.Null);
        Assert.Equal("--job1", seen!.Argument("name"));
        Assert.True(seen.Flag("json"));
    }

    [Theory]
    [InlineData("run --bogus 1", "unknown option --bogus")]
    [InlineData("run --bogus=1", "unknown option --bogus")]
    [InlineData("run job1 --bogus", "unknown option --bogus")]
    [InlineData("run --torus", "--torus needs a value")]
    [InlineData("walk", "unknown command 'walk'")]
    [InlineData("run a b", "unexpected argument 'b'")]
    public void UsageErrorsAreOneClearLineWithExitCode2(string args, string expected)
    {
        var ex = Assert.Throws<CliException>(() => Sample(_ => { }).Invoke(args.Split(' '), TextWriter.Null));
        Assert.Contains(expected, ex.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', ex.Message);
        Assert.Equal(2, ex.ExitCode);
    }

    [Fact]
    public void BadValuesAreRejectedWhenRead()
    {
        ParsedArguments? seen = null;
        Sample(p => seen = p).Invoke(["run", "--input-per-server", "lots"], TextWriter.Null);
        var ex = Assert.Throws<CliException>(() => seen!.Bytes("input-per-server"));
        Assert.Contains("must be a size", ex.Message, StringComparison.Ordinal);
    }

    [Fact]
    public void HelpListsEveryOptionWithItsDefault()
    {
        var writer = new StringWriter();
        Assert.Equal(0, Sample(_ => { }).Invoke(["run", "--help"], writer));
        var help = writer.ToString();
        Assert.Contains("--torus <XxYxZ>", help, StringComparison.Ordinal);
        Assert.Contains("[default: 2MB]", help, StringComparison.Ordinal);
        Assert.Contains("--json", help, StringComparison.Ordinal);
    }

    [Fact]
    public void HelpKeepsALongOptionApartFromItsDescription()
    {
        var command = new Command("camdoop", "root").Add(
            new Command("up", "brings up")
                .Option("receive-buffer-at", "Apply it to one server", "X,Y,Z")
                .Option("torus", "Torus size", "XxYxZ")
                .Handle(_ => 0));
        var writer = new StringWriter();
        Assert.Equal(0, command.Invoke(["up", "--help"], writer));
        var lines = writer.ToString().Split('\n');
        var longLine = lines.Single(l => l.Contains("--receive-buffer-at", StringComparison.Ordinal));
        var shortLine = lines.Single(l => l.Contains("--torus", StringComparison.Ordinal));
        Assert.Contains("<X,Y,Z>  Apply", longLine, StringComparison.Ordinal);
        // Descriptions start in one column.
        Assert.Equal(longLine.IndexOf("Apply", StringComparison.Ordinal), shortLine.IndexOf("Torus size", StringComparison.Ordinal));
    }

    [Theory]
    [InlineData("2MB", 2L * 1024 * 1024)]
    [InlineData("64KB", 64L * 1024)]
    [InlineData("1.5GiB", 3L * 512 * 1024 * 1024)]
    [InlineData("1000", 1000L)]
    public void ByteSizesParse(string text, long expected)
    {
        Assert.True(Units.TryParseBytes(text, out long v));
        Assert.Equal(expected, v);
    }
}
