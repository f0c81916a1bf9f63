namespace Camdoop.Cli.CommandLine;

/// <summary>One --option of a command. Flags take no value.</summary>
public sealed record OptionSpec(string Name, string Help, string? ValueName = null, string? Default = null)
{
    public bool IsFlag => ValueName is null;
}
