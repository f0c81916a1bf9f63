using System.Text;

namespace Camdoop.Cli.CommandLine;

/// <summary>A command or a group of subcommands, with its options and --help text.</summary>
public sealed class Command
{
    private readonly List<Command> _subcommands = [];
    private readonly List<OptionSpec> _options = [];
    private readonly List<(string Name, string Help, bool Required)> _arguments = [];

    public Command(string name, string summary)
    {
        Name = name;
        Summary = summary;
    }

    public string Name { get; }

    public string Summary { get; }

    public string? Details { get; init; }

    public Func<ParsedArguments, int>? Handler { get; private set; }

    public Command? Parent { get; private set; }

    public IReadOnlyList<OptionSpec> Options => _options;

    public IReadOnlyList<Command> Subcommands => _subcommands;

    internal IReadOnlyList<(string Name, string Help, bool Required)> Arguments => _arguments;

    public Command Add(Command sub)
    {
        sub.Parent = this;
        _subcommands.Add(sub);
        return this;
    }

    public Command Option(string name, string help, string? valueName = null, string? defaultValue = null)
    {
        _options.Add(new OptionSpec(name, help, valueName, defaultValue));
        return this;
    }

    public Command Flag(string name, string help) => Option(name, help);

    public Command Argument(string name, string help, bool required = true)
    {
        _arguments.Add((name, help, required));
        return this;
    }

    public Command Handle(Func<ParsedArguments, int> handler)
    {
        Handler = handler;
        return this;
    }

    public string Path => Parent is null ? Name : $"{Parent.Path} {Name}";

    /// <summary>Finds the subcommand named by the arguments, parses the rest, and runs it.</summary>
    public int Invoke(string[] args, TextWriter output)
    {
        var command = this;
        int i = 0;
        while (i < args.Length && command._subcommands.Count > 0 && !args[i].StartsWith('-'))
        {
            var next = command._subcommands.Find(c => c.Name == args[i])
                ?? throw CliException.Usage($"{command.Path}: unknown command '{args[i]}' (see '{command.Path} --help')");
            command = next;
            i++;
        }
        var rest = args[i..];
        if (rest.Contains("--help") || rest.Contains("-h") || command.Handler is null)
        {
            output.Write(command.HelpText());
            return command.Handler is null && !(rest.Contains("--help") || rest.Contains("-h")) && rest.Length > 0 ? 2 : 0;
        }
        var parsed = ParsedArguments.Parse(command, rest);
        return command.Handler(parsed);
    }

    public string HelpText()
    {
        var sb = new StringBuilder();
        sb.Append("Usage: ").Append(Path);
        if (_subcommands.Count > 0)
        {
            sb.Append(" <command>");
        }
        foreach (var (name, _, required) in _arguments)
        {
            sb.Append(required ? $" <{name}>" : $" [{name}]");
        }
        if (_options.Count > 0)
        {
            sb.Append(" [options]");
        }
        sb.AppendLine().AppendLine().AppendLine(Summary);
        if (Details is not null)
        {
            sb.AppendLine().AppendLine(Details);
        }
        if (_subcommands.Count > 0)
        {
            sb.AppendLine().AppendLine("Commands:");
            foreach (var c in _subcommands)
            {
                sb.Append("  ").Append(c.Name.PadRight(Math.Max(14, c.Name.Length + 2))).AppendLine(c.Summary);
            }
        }
        // One column for every name, wide enough for the longest, so a description never runs into its option.
        int column = 26;
        foreach (var (name, _, _) in _arguments)
        {
            column = Math.Max(column, name.Length + 2);
        }
        foreach (var o in _options)
        {
            column = Math.Max(column, OptionLabel(o).Length + 2);
        }
        if (_arguments.Count > 0)
        {
            sb.AppendLine().AppendLine("Arguments:");
            foreach (var (name, help, _) in _arguments)
            {
                sb.Append("  ").Append(name.PadRight(column)).AppendLine(help);
            }
        }
        sb.AppendLine().AppendLine("Options:");
        foreach (var o in _options)
        {
            sb.Append("  ").Append(OptionLabel(o).PadRight(column)).Append(o.Help);
            if (o.Default is not null)
            {
                sb.Append(" (default: ").Append(o.Default).Append(')');
            }
            sb.AppendLine();
        }
        sb.Append("  ").Append("--help".PadRight(column)).AppendLine("Show this help");
        return sb.ToString();
    }

    private static string OptionLabel(OptionSpec o) => o.IsFlag ? $"--{o.Name}" : $"--{o.Name} <{o.ValueName}>";
}
