using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.CommandLine;

/// <summary>Response files: a word @FILE stands for the words of FILE, as System.CommandLine reads them.</summary>
public sealed class ResponseFileTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-rsp-").FullName;

    private static Command Sample(Action<ParsedArguments> capture) => CommandParsingTests.Sample(capture);

    [Fact]
    public void TheFilesWordsTakeItsPlace()
    {
        string nested = Write("nested.rsp", "--json");
        string file = Write("run.rsp",
            "# a comment line",
            "run job1",
            "--torus 4x4x4 --input-per-server 20KB",
            "--query \"select busy_ns from links every 1ms\"",
            "@" + nested);
        ParsedArguments? seen = null;
        Assert.Equal(0, Sample(p => seen = p).Invoke(["@" + file, "--torus", "2x2x2"], TextWriter.Null));
        Assert.NotNull(seen);
        Assert.Equal("job1", seen.Argument("name"));
        // Words after the file come after its words: the later --torus wins.
        Assert.Equal("2x2x2", seen.String("torus"));
        Assert.Equal(20 * 1024, seen.Bytes("input-per-server"));
        Assert.Equal(new[] { "select busy_ns from links every 1ms" }, seen.Strings("query"));
        Assert.True(seen.Flag("json"));
    }

    [Fact]
    public void AMissingFileIsAUsageError()
    {
        string missing = Path.Combine(_directory, "missing.rsp");
        var error = Assert.Throws<CliException>(() => Sample(_ => { }).Invoke(["run", "@" + missing], TextWriter.Null));
        Assert.Equal(2, error.ExitCode);
        Assert.Contains(missing, error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', error.Message);
    }

    [Fact]
    public void TheBuiltCommandReadsItsCommandAndOptionsFromAFile()
    {
        string file = Write("sim.rsp", "sim", "run --torus 2x2x2", "--bogus");
        var result = CliRunner.Run("@" + file);
        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.StartsWith("camdoop sim run: unknown option --bogus", result.Stderr, StringComparison.Ordinal);
        var help = CliRunner.Run("@" + Write("help.rsp", "testbed up", "--help"));
        Assert.True(help.ExitCode == 0, help.ToString());
        Assert.Contains("\n  camdoop testbed up [options]\n", help.Stdout, StringComparison.Ordinal);
    }

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private string Write(string name, params string[] lines)
    {
        string path = Path.Combine(_directory, name);
        File.WriteAllLines(path, lines);
        return path;
    }
}
