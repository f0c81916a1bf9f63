using System.Text.RegularExpressions;
using Camdoop.Cli.CommandLine;
using Camdoop.Cli.Commands;

namespace Camdoop.Cli.Tests.Docs;

/// <summary>
/// docs/cli.md against the commands themselves: for every command, each option its --help lists must be in the
/// command's section of the reference (same label, same default) and each option the section lists must be in the
/// help, and the section must show the help's usage line. A section is the text from a heading "## `camdoop COMMAND`"
/// to the next "## " heading; its options are the table rows that start with "| `-". An option's default is the one
/// its help line ends with, "[default: VALUE]", else a fallback its description ends with, "(default: WORDS)".
/// </summary>
public sealed partial class CliReferenceTests
{
    private const string NoDefault = "–";

    private static readonly Lazy<Reference> Doc = new(Reference.Load);

    /// <summary>Every command that runs something (not the groups "sim" and "testbed"), as its path after "camdoop".</summary>
    public static TheoryData<string> Commands()
    {
        var data = new TheoryData<string>();
        foreach (var command in Leaves(RootCommand.Create()))
        {
            data.Add(Name(command));
        }
        return data;
    }

    [Theory]
    [MemberData(nameof(Commands))]
    public void EveryOptionOfTheHelpIsInTheReferenceAndNoOther(string command)
    {
        string help = HelpOf(command);
        string section = Doc.Value.Section(command);

        string usageLine = UsageOf(help);
        Assert.True(section.Split('\n').Any(line => line.Trim() == usageLine),
            $"{Reference.FileName}, section `camdoop {command}`: the usage line '{usageLine}' that --help prints is missing");

        var inHelp = HelpOptions(help);
        var inDoc = DocOptions(section, command);
        Assert.NotEmpty(inHelp);

        var undocumented = inHelp.Keys.Where(name => !inDoc.ContainsKey(name)).ToList();
        Assert.True(undocumented.Count == 0,
            $"{Reference.FileName}, section `camdoop {command}`, does not list {string.Join(", ", undocumented)}, which 'camdoop {command} --help' lists");
        var unknown = inDoc.Keys.Where(name => !inHelp.ContainsKey(name)).ToList();
        Assert.True(unknown.Count == 0,
            $"{Reference.FileName}, section `camdoop {command}`, lists {string.Join(", ", unknown)}, which 'camdoop {command} --help' does not have");

        foreach (var (name, expected) in inHelp)
        {
            var documented = inDoc[name];
            Assert.True(expected.Label == documented.Label,
                $"{Reference.FileName}, section `camdoop {command}`: {name} is shown as '{documented.Label}', --help shows '{expected.Label}'");
            Assert.True(expected.Default == documented.Default,
                $"{Reference.FileName}, section `camdoop {command}`: the default of {name} is '{documented.Default}', --help says '{expected.Default}'");
        }
    }

    [Fact]
    public void EveryCommandHasOneSectionAndEverySectionIsACommand()
    {
        var commands = Leaves(RootCommand.Create()).Select(Name).ToHashSet(StringComparer.Ordinal);
        var sections = Doc.Value.SectionNames;
        var duplicated = sections.GroupBy(s => s, StringComparer.Ordinal).Where(g => g.Count() > 1).Select(g => g.Key).ToList();
        Assert.True(duplicated.Count == 0, $"{Reference.FileName} has more than one section for: {string.Join(", ", duplicated)}");
        var missing = commands.Where(c => !sections.Contains(c, StringComparer.Ordinal)).ToList();
        Assert.True(missing.Count == 0, $"{Reference.FileName} has no section for: {string.Join(", ", missing.Select(c => "camdoop " + c))}");
        var stale = sections.Where(s => !commands.Contains(s)).ToList();
        Assert.True(stale.Count == 0, $"{Reference.FileName} has sections for commands that do not exist: {string.Join(", ", stale.Select(s => "camdoop " + s))}");
    }

    [Fact]
    public void TheHelpParserReadsOptionsPlaceholdersAndDefaults()
    {
        // Guards the test itself: were the parser to find nothing, the comparisons above would pass vacuously.
        var options = HelpOptions(HelpOf("sim run"));
        Assert.Equal(new OptionEntry("--torus <XxYxZ>", "3x3x3"), options["--torus"]);
        Assert.Equal(new OptionEntry("--trees <FAMILY>", "shallow"), options["--trees"]);
        Assert.Equal(new OptionEntry("--input <PATH>", NoDefault), options["--input"]);
        Assert.Equal(new OptionEntry("--verify", NoDefault), options["--verify"]);
        Assert.Equal(new OptionEntry("-h, --help", NoDefault), options["--help"]);
        Assert.Equal(new OptionEntry("--frontend <HOST:PORT>", "the testbed's"), HelpOptions(HelpOf("ls"))["--frontend"]);
        Assert.Equal(new OptionEntry("--reducers <LIST>", NoDefault), HelpOptions(HelpOf("sim sweep"))["--reducers"]);
    }

    private static IEnumerable<Command> Leaves(Command command)
    {
        if (command.Handler is not null)
        {
            yield return command;
        }
        foreach (var sub in command.Subcommands)
        {
            foreach (var leaf in Leaves(sub))
            {
                yield return leaf;
            }
        }
    }

    private static string Name(Command command) => command.Path["camdoop ".Length..];

    /// <summary>What 'camdoop COMMAND --help' prints, run in-process through the real command tree.</summary>
    private static string HelpOf(string command)
    {
        using var output = new StringWriter();
        int code = RootCommand.Create().Invoke([.. command.Split(' '), "--help"], output);
        Assert.Equal(0, code);
        return output.ToString().Replace("\r\n", "\n", StringComparison.Ordinal);
    }

    /// <summary>The command line that the "Usage:" section of a help text shows.</summary>
    private static string UsageOf(string help)
    {
        var lines = help.Split('\n');
        int heading = Array.IndexOf(lines, "Usage:");
        Assert.True(heading >= 0 && heading + 1 < lines.Length, $"no usage in the help:\n{help}");
        return lines[heading + 1].Trim();
    }

    /// <summary>The "Options:" section of a help text: option name to its label and default.</summary>
    private static Dictionary<string, OptionEntry> HelpOptions(string help)
    {
        var options = new Dictionary<string, OptionEntry>(StringComparer.Ordinal);
        bool inOptions = false;
        foreach (var line in help.Split('\n'))
        {
            if (line == "Options:")
            {
                inOptions = true;
                continue;
            }
            if (!inOptions)
            {
                continue;
            }
            // The section ends at a blank line or the next heading.
            if (!line.StartsWith("  ", StringComparison.Ordinal))
            {
                break;
            }
            var match = HelpOptionLine().Match(line);
            Assert.True(match.Success, $"cannot read the help line '{line}'");
            string description = match.Groups["help"].Value;
            var @default = HelpDefault().Match(description);
            if (!@default.Success)
            {
                @default = HelpFallback().Match(description);
            }
            options.Add(match.Groups["name"].Value, new OptionEntry(match.Groups["label"].Value, @default.Success ? @default.Groups[1].Value : NoDefault));
        }
        return options;
    }

    /// <summary>The option rows of a section's tables: "| `--name &lt;VALUE&gt;` | `default` or – | meaning |" (or "| `-h, --help` |").</summary>
    private static Dictionary<string, OptionEntry> DocOptions(string section, string command)
    {
        var options = new Dictionary<string, OptionEntry>(StringComparer.Ordinal);
        foreach (var line in section.Split('\n'))
        {
            if (!line.StartsWith("| `-", StringComparison.Ordinal))
            {
                continue;
            }
            var cells = line.Split('|');
            Assert.True(cells.Length >= 4, $"{Reference.FileName}, section `camdoop {command}`: the row '{line}' needs the columns option | default | meaning");
            string label = cells[1].Trim().Trim('`');
            string @default = cells[2].Trim().Trim('`');
            // "-h, --help" is named --help.
            string name = label.Split(' ').First(word => word.StartsWith("--", StringComparison.Ordinal));
            Assert.True(options.TryAdd(name, new OptionEntry(label, @default)),
                $"{Reference.FileName}, section `camdoop {command}`, lists {name} twice");
        }
        return options;
    }

    [GeneratedRegex(@"^  (?<label>(?:-[a-z], )?(?<name>--[a-z0-9-]+)(?: <[^>]+>)?)\s{2,}(?<help>.*)$")]
    private static partial Regex HelpOptionLine();

    [GeneratedRegex(@"\[default: ([^\[\]]*)\]$")]
    private static partial Regex HelpDefault();

    [GeneratedRegex(@"\(default: ([^()]*)\)$")]
    private static partial Regex HelpFallback();

    [GeneratedRegex(@"^## `camdoop (?<command>[^`]+)`\s*$")]
    private static partial Regex SectionHeading();

    private sealed record OptionEntry(string Label, string Default);

    /// <summary>docs/cli.md, found from the test's directory by walking up to the one that holds Camdoop.sln.</summary>
    private sealed class Reference
    {
        public const string FileName = "docs/cli.md";

        private readonly Dictionary<string, List<string>> _sections;

        private Reference(Dictionary<string, List<string>> sections, List<string> names)
        {
            _sections = sections;
            SectionNames = names;
        }

        /// <summary>The command of every "## `camdoop COMMAND`" heading, in order, repeats included.</summary>
        public IReadOnlyList<string> SectionNames { get; }

        public static Reference Load()
        {
            var directory = new DirectoryInfo(AppContext.BaseDirectory);
            while (directory is not null && !File.Exists(Path.Combine(directory.FullName, "Camdoop.sln")))
            {
                directory = directory.Parent;
            }
            Assert.True(directory is not null, $"no directory above {AppContext.BaseDirectory} holds Camdoop.sln");
            string path = Path.Combine(directory!.FullName, "docs", "cli.md");
            Assert.True(File.Exists(path), $"{path} is missing");
            var sections = new Dictionary<string, List<string>>(StringComparer.Ordinal);
            var names = new List<string>();
            List<string>? current = null;
            foreach (var line in File.ReadAllText(path).Replace("\r\n", "\n", StringComparison.Ordinal).Split('\n'))
            {
                if (line.StartsWith("## ", StringComparison.Ordinal))
                {
                    var heading = SectionHeading().Match(line);
                    current = null;
                    if (heading.Success)
                    {
                        string name = heading.Groups["command"].Value;
                        names.Add(name);
                        current = [];
                        sections.TryAdd(name, current);
                    }
                    continue;
                }
                current?.Add(line);
            }
            return new Reference(sections, names);
        }

        public string Section(string command)
        {
            Assert.True(_sections.TryGetValue(command, out var lines),
                $"{FileName} has no section \"## `camdoop {command}`\"");
            return string.Join('\n', lines!);
        }
    }
}
