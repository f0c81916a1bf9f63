using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Commands;
using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.CommandLine;

/// <summary>A mistyped command or option: one usage line that names the closest ones System.CommandLine finds.</summary>
public class TypoSuggestionTests
{
    [Theory]
    [InlineData("dmeo", "camdoop: unknown command 'dmeo', did you mean 'demo'? (see 'camdoop --help')")]
    [InlineData("sim rnu", "camdoop sim: unknown command 'rnu', did you mean 'run'? (see 'camdoop sim --help')")]
    [InlineData("sim run --toruss 4x4x4", "camdoop sim run: unknown option --toruss, did you mean --torus? (see 'camdoop sim run --help')")]
    [InlineData("sim run --seeed=3", "camdoop sim run: unknown option --seeed, did you mean --seed? (see 'camdoop sim run --help')")]
    [InlineData("sim run --hepl", "camdoop sim run: unknown option --hepl, did you mean --help? (see 'camdoop sim run --help')")]
    // rm's free <name> would take the mistyped option as its value: it is still an unknown option.
    [InlineData("rm --frontnd 127.0.0.1:7070 corpus", "camdoop rm: unknown option --frontnd, did you mean --frontend? (see 'camdoop rm --help')")]
    [InlineData("testbed link 0,0,0 -X dwon --prefx cdb", "camdoop testbed link: unknown option --prefx, did you mean --prefix? (see 'camdoop testbed link --help')")]
    public void AMistypedNameSuggestsTheClosest(string args, string expected)
    {
        var error = Assert.Throws<CliException>(() => RootCommand.Create().Invoke(args.Split(' '), TextWriter.Null));
        Assert.Equal(expected, error.Message);
        Assert.Equal(2, error.ExitCode);
    }

    [Theory]
    [InlineData("sim run --seed 1 --reducerss 2", "did you mean --reducers?")]
    [InlineData("sim sweap", "did you mean 'sweep'?")]
    [InlineData("certs nod", "did you mean 'node'?")]
    public void ASuggestionIsOneOfTheCommandsOwnNames(string args, string expected)
    {
        var error = Assert.Throws<CliException>(() => RootCommand.Create().Invoke(args.Split(' '), TextWriter.Null));
        Assert.Contains(expected, error.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("xyzzyplugh")]
    [InlineData("sim run --completely-unrelated 1")]
    public void NothingCloseSuggestsNothing(string args)
    {
        var error = Assert.Throws<CliException>(() => RootCommand.Create().Invoke(args.Split(' '), TextWriter.Null));
        Assert.DoesNotContain("did you mean", error.Message, StringComparison.Ordinal);
        Assert.Equal(2, error.ExitCode);
    }

    [Fact]
    public void TheBuiltCommandSaysItOnOneLineOfStderr()
    {
        var result = CliRunner.Run("sim", "run", "--torsu", "2x2x2");
        Assert.True(result.ExitCode == 2, result.ToString());
        Assert.Equal("", result.Stdout);
        Assert.Equal("camdoop sim run: unknown option --torsu, did you mean --torus? (see 'camdoop sim run --help')", result.Stderr.TrimEnd('\n'));
    }
}
