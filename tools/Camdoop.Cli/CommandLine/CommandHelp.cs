using System.CommandLine;
using System.CommandLine.Help;
using System.CommandLine.Invocation;

namespace Camdoop.Cli.CommandLine;

/// <summary>
/// System.CommandLine's generated help for the command given, with the command's <see cref="Command.Details"/> after
/// its summary. Written for --help and for a group run without a subcommand.
/// </summary>
internal sealed class CommandHelp(bool clearsParseErrors) : SynchronousCommandLineAction
{
    /// <summary>True for --help, which shows the help whatever else is wrong with the command line.</summary>
    public override bool ClearsParseErrors => clearsParseErrors;

    public override int Invoke(ParseResult parseResult)
    {
        var help = new HelpAction();
        // Wrapped to the terminal's width only on the terminal itself; a file or a test gets whole lines.
        if (!ReferenceEquals(parseResult.InvocationConfiguration.Output, Console.Out))
        {
            help.MaxWidth = int.MaxValue;
        }
        var command = parseResult.CommandResult.Command;
        if (command is not Command.BuiltCommand { Spec.Details: { } details })
        {
            return help.Invoke(parseResult);
        }
        // The description is also the command's line in its group's list of commands, so the details join it only
        // while this help is written.
        string? summary = command.Description;
        command.Description = $"{summary}\n\n{details}";
        try
        {
            return help.Invoke(parseResult);
        }
        finally
        {
            command.Description = summary;
        }
    }
}
