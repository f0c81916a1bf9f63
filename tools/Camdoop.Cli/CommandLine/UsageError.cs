using System.CommandLine;
using System.CommandLine.Invocation;
using System.CommandLine.Parsing;
using SclCommand = System.CommandLine.Command;

namespace Camdoop.Cli.CommandLine;

/// <summary>What is wrong with a command line, as one line naming the command, for <see cref="CliException"/> (exit 2).</summary>
internal static class UsageError
{
    /// <summary>The first problem of the parsed command line; null when it has none, or asks for --help.</summary>
    public static CliException? Find(ParseResult result)
    {
        if (result.Action is { ClearsParseErrors: true })
        {
            return null;
        }
        var symbol = result.CommandResult.Command;
        string path = symbol is Command.BuiltCommand built ? built.Spec.Path : symbol.Name;
        string see = $" (see '{path} --help')";
        if (StrayOption(result) is { } stray)
        {
            return UnknownOption(symbol, path, stray, see);
        }
        if (result.Action is not ParseErrorAction)
        {
            return null;
        }
        if (result.UnmatchedTokens is [var token, ..])
        {
            if (LooksLikeAnOption(token))
            {
                return UnknownOption(symbol, path, token, see);
            }
            if (symbol.Subcommands.Count > 0)
            {
                var commands = TypoSuggestions.For(symbol, token);
                return CliException.Usage($"{path}: unknown command '{token}'{DidYouMean(commands.Select(c => $"'{c}'"))}{see}");
            }
            return CliException.Usage($"{path}: unexpected argument '{token}'{see}");
        }
        foreach (var option in result.CommandResult.Children.OfType<OptionResult>())
        {
            if (option is { Implicit: false, Tokens.Count: 0 } && option.Option.Arity.MinimumNumberOfValues > 0)
            {
                return CliException.Usage($"{path}: {option.Option.Name} needs a value <{option.Option.HelpName}>");
            }
        }
        foreach (var argument in symbol.Arguments)
        {
            if (argument.Arity.MinimumNumberOfValues > 0 && result.GetResult(argument) is null or { Tokens.Count: 0 })
            {
                return CliException.Usage($"{path}: missing argument <{argument.Name}>");
            }
        }
        // Anything else in System.CommandLine's words (a response file not found, say), in the style of the others.
        string message = result.Errors.Count > 0 ? result.Errors[0].Message.TrimEnd('.') : "invalid command line";
        return CliException.Usage($"{path}: {char.ToLowerInvariant(message[0])}{message[1..]}");
    }

    /// <summary>
    /// A --name token that took the place of a positional argument: System.CommandLine reads an unknown --option as
    /// a value, but no positional argument of a command starts with "--" (after "--" one may).
    /// </summary>
    private static string? StrayOption(ParseResult result)
    {
        var positional = result.CommandResult.Command.Arguments
            .SelectMany(a => result.GetResult(a)?.Tokens ?? [])
            .ToList();
        foreach (var token in result.Tokens.TakeWhile(t => t.Type != TokenType.DoubleDash))
        {
            if (token.Value.StartsWith("--", StringComparison.Ordinal) && positional.Any(p => ReferenceEquals(p, token)))
            {
                return token.Value;
            }
        }
        return null;
    }

    private static bool LooksLikeAnOption(string token) =>
        token.StartsWith("--", StringComparison.Ordinal) || (token.Length > 1 && token[0] == '-' && char.IsLetter(token[1]));

    private static CliException UnknownOption(SclCommand command, string path, string token, string see)
    {
        // --name=value names the option --name.
        string name = token.Split('=', 2)[0];
        return CliException.Usage($"{path}: unknown option {name}{DidYouMean(TypoSuggestions.For(command, name))}{see}");
    }

    private static string DidYouMean(IEnumerable<string> names) => names.ToList() switch
    {
        [] => "",
        [var one] => $", did you mean {one}?",
        [.. var some, var last] => $", did you mean {string.Join(", ", some)} or {last}?",
    };
}
