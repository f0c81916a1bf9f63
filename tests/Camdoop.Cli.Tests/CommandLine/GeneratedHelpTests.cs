using Camdoop.Cli.Commands;
using Camdoop.Cli.Tests.Support;
using Command = Camdoop.Cli.CommandLine.Command;

namespace Camdoop.Cli.Tests.CommandLine;

/// <summary>The help that System.CommandLine writes for the command tree: every command's, from --help or -h anywhere.</summary>
public class GeneratedHelpTests
{
    public static TheoryData<string> Commands()
    {
        var data = new TheoryData<string>();
        void Walk(Command command)
        {
            data.Add(command.Path);
            foreach (var sub in command.Subcommands)
            {
                Walk(sub);
            }
        }
        Walk(RootCommand.Create());
        return data;
    }

    [Theory]
    [MemberData(nameof(Commands))]
    public void EveryCommandsHelpShowsItsSummaryDetailsUsageAndEveryOption(string path)
    {
        var command = Find(path);
        string help = Help([.. path.Split(' ').Skip(1), "--help"]);
        var lines = help.Split('\n');
        Assert.Equal("Description:", lines[0]);
        Assert.Equal("  " + command.Summary, lines[1]);
        foreach (var line in command.Details?.Split('\n') ?? [])
        {
            Assert.Contains("  " + line, lines);
        }
        Assert.Contains("Usage:", lines);
        Assert.StartsWith("  " + path, lines[Array.IndexOf(lines, "Usage:") + 1], StringComparison.Ordinal);
        foreach (var option in command.Options)
        {
            string label = option.IsFlag ? $"--{option.Name}" : $"--{option.Name} <{option.ValueName}>";
            string line = Assert.Single(lines, l => l.StartsWith($"  {label} ", StringComparison.Ordinal));
            Assert.Contains(option.Help, line, StringComparison.Ordinal);
            if (option.Default is { } value)
            {
                Assert.EndsWith($"[default: {value}]", line, StringComparison.Ordinal);
            }
        }
        Assert.Single(lines, l => l.StartsWith("  -h, --help ", StringComparison.Ordinal));
        foreach (var sub in command.Subcommands)
        {
            Assert.Single(lines, l => l.StartsWith($"  {sub.Name} ", StringComparison.Ordinal) && l.EndsWith(sub.Summary, StringComparison.Ordinal));
        }
    }

    [Fact]
    public void HelpAnywhereWinsOverAnyOtherMistake()
    {
        string expected = Help(["sim", "run", "--help"]);
        Assert.Equal(expected, Help(["sim", "run", "--toruss", "9", "-h"]));
        Assert.Equal(expected, Help(["sim", "-h", "run", "--torus"]));
    }

    [Fact]
    public void AGroupAloneOrNoCommandAtAllListsTheCommands()
    {
        Assert.Equal(Help(["sim", "--help"]), Help(["sim"]));
        string root = Help([]);
        Assert.Equal(Help(["--help"]), root);
        foreach (var sub in RootCommand.Create().Subcommands)
        {
            Assert.Contains($"\n  {sub.Name} ", root, StringComparison.Ordinal);
        }
    }

    [Fact]
    public void TheBuiltCommandPrintsItsHelpOnStdout()
    {
        var result = CliRunner.Run("rm", "--help");
        Assert.True(result.ExitCode == 0 && result.Stderr.Length == 0, result.ToString());
        Assert.Contains("\nUsage:\n  camdoop rm <name> [options]\n", result.Stdout, StringComparison.Ordinal);
        Assert.Contains("\nArguments:\n  <name>  ", result.Stdout, StringComparison.Ordinal);
        Assert.Contains("\n  --json ", result.Stdout, StringComparison.Ordinal);
    }

    private static Command Find(string path)
    {
        var command = RootCommand.Create();
        foreach (var name in path.Split(' ').Skip(1))
        {
            command = command.Subcommands.Single(c => c.Name == name);
        }
        return command;
    }

    private static string Help(string[] args)
    {
        using var output = new StringWriter();
        Assert.Equal(0, RootCommand.Create().Invoke(args, output));
        return output.ToString().Replace("\r\n", "\n", StringComparison.Ordinal);
    }
}
