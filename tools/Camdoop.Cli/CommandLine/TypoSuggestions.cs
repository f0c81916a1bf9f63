using System.CommandLine;
using System.CommandLine.Invocation;
using SclCommand = System.CommandLine.Command;

namespace Camdoop.Cli.CommandLine;

/// <summary>The names a mistyped option or command was probably meant to be, as System.CommandLine finds them.</summary>
internal static class TypoSuggestions
{
    /// <summary>
    /// The options and subcommands of <paramref name="command"/> (with the options its ancestors give every command)
    /// closest to <paramref name="token"/>; empty when none is close.
    /// </summary>
    public static IReadOnlyList<string> For(SclCommand command, string token)
    {
        // System.CommandLine suggests names for the tokens it left unmatched, and writes them out. It is asked with a
        // copy that has no positional arguments: in the command itself, an unknown --option can fill a free argument,
        // and is then not unmatched.
        var probe = new SclCommand(command.Name);
        var names = new HashSet<string>(StringComparer.Ordinal);
        foreach (var option in OptionsOf(command))
        {
            var copy = new Option<bool>(option.Name, [.. option.Aliases]);
            probe.Options.Add(copy);
            names.UnionWith([option.Name, .. option.Aliases]);
        }
        foreach (var sub in command.Subcommands.Where(c => !c.Hidden))
        {
            var copy = new SclCommand(sub.Name);
            foreach (var alias in sub.Aliases)
            {
                copy.Aliases.Add(alias);
            }
            probe.Subcommands.Add(copy);
            names.UnionWith([sub.Name, .. sub.Aliases]);
        }
        var result = probe.Parse([token]);
        if (result.Action is not ParseErrorAction errors)
        {
            return [];
        }
        errors.ShowHelp = false;
        using var output = new StringWriter();
        result.Invoke(new InvocationConfiguration { Output = output, Error = TextWriter.Null });
        // Each suggestion is a line of its own, among lines of prose: keep the lines that are names.
        return [.. output.ToString().Split('\n').Select(line => line.Trim()).Where(names.Contains).Distinct()];
    }

    private static IEnumerable<Option> OptionsOf(SclCommand command)
    {
        var own = command.Options.Where(o => !o.Hidden);
        var inherited = command.Parents.OfType<SclCommand>().SelectMany(OptionsOf).Where(o => o.Recursive);
        return own.Concat(inherited).DistinctBy(o => o.Name);
    }
}
