using System.CommandLine;

namespace Camdoop.Cli.CommandLine;

/// <summary>One --option of a command. Flags take no value.</summary>
public sealed record OptionSpec(string Name, string Help, string? ValueName = null, string? Default = null)
{
    public bool IsFlag => ValueName is null;

    /// <summary>
    /// The System.CommandLine option: a bool for a flag (--flag, --flag=false); else one value per occurrence, every
    /// occurrence kept, so that a repeatable option has them all and any other takes the last one.
    /// </summary>
    internal Option Build()
    {
        if (IsFlag)
        {
            return new Option<bool>("--" + Name) { Description = Help };
        }
        var option = new Option<string[]>("--" + Name) { Description = Help, HelpName = ValueName };
        if (Default is { } value)
        {
            option.DefaultValueFactory = _ => [value];
        }
        return option;
    }
}
