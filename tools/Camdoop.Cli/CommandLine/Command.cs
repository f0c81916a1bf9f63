using System.CommandLine;
using System.CommandLine.Help;
using SclCommand = System.CommandLine.Command;

namespace Camdoop.Cli.CommandLine;

/// <summary>
/// A command or a group of subcommands, with its options. Parsing, --help and response files are System.CommandLine's:
/// the command tree is built into one of its commands the first time it is invoked.
/// </summary>
public sealed class Command
{
    /// <summary>No short options but -h: bundling would read a value such as "-hX" as -h and X.</summary>
    private static readonly ParserConfiguration Parser = new() { EnablePosixBundling = false };

    private readonly List<Command> _subcommands = [];
    private readonly List<OptionSpec> _options = [];
    private readonly List<(string Name, string Help, bool Required)> _arguments = [];
    private BuiltCommand? _built;

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

    public string Path => Parent is null ? Name : $"{Parent.Path} {Name}";

    /// <summary>The System.CommandLine command of this one, with its options, arguments and subcommands.</summary>
    internal BuiltCommand Built => _built ??= Build();

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

    /// <summary>
    /// Parses the arguments and runs the command they name, or writes its help to <paramref name="output"/>; a usage
    /// error is thrown as a <see cref="CliException"/> with exit code 2.
    /// </summary>
    public int Invoke(string[] args, TextWriter output)
    {
        var result = Built.Parse(args, Parser);
        if (UsageError.Find(result) is { } error)
        {
            throw error;
        }
        // Exceptions reach the caller, which prints them as one line; System.CommandLine's handler prints a stack.
        return result.Invoke(new InvocationConfiguration { Output = output, EnableDefaultExceptionHandler = false });
    }

    internal OptionSpec? OptionNamed(string name) => _options.Find(o => o.Name == name);

    internal Option? OptionSymbol(string name) => Built.Options.FirstOrDefault(o => o.Name == "--" + name);

    internal Argument<string>? ArgumentSymbol(string name) =>
        Built.Arguments.OfType<Argument<string>>().FirstOrDefault(a => a.Name == name);

    private BuiltCommand Build()
    {
        var symbol = new BuiltCommand(this);
        if (Parent is null)
        {
            // Recursive: every subcommand has it, and its help is the one of the command it follows.
            symbol.Options.Add(new HelpOption("--help", "-h")
            {
                Description = "Show this help",
                Action = new CommandHelp(clearsParseErrors: true),
            });
        }
        foreach (var spec in _options)
        {
            symbol.Options.Add(spec.Build());
        }
        foreach (var (name, help, required) in _arguments)
        {
            var arity = required ? ArgumentArity.ExactlyOne : ArgumentArity.ZeroOrOne;
            symbol.Arguments.Add(new Argument<string>(name) { Description = help, Arity = arity });
        }
        foreach (var sub in _subcommands)
        {
            symbol.Subcommands.Add(sub.Built);
        }
        if (Handler is { } handler)
        {
            symbol.SetAction(result => handler(new ParsedArguments(this, result)));
        }
        else
        {
            // A group run alone shows its commands; with an unknown one it is still a usage error.
            symbol.Action = new CommandHelp(clearsParseErrors: false);
        }
        return symbol;
    }

    /// <summary>The System.CommandLine command built from a <see cref="Command"/>, which it leads back to.</summary>
    internal sealed class BuiltCommand(Command spec) : SclCommand(spec.Name, spec.Summary)
    {
        public Command Spec { get; } = spec;
    }
}
