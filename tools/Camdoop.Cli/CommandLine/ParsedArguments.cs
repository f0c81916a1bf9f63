using System.CommandLine;
using System.Globalization;

namespace Camdoop.Cli.CommandLine;

/// <summary>The --options and positional arguments of one command invocation, as parsed, with typed accessors.</summary>
public sealed class ParsedArguments
{
    private readonly Command _command;
    private readonly ParseResult _result;

    internal ParsedArguments(Command command, ParseResult result)
    {
        _command = command;
        _result = result;
    }

    public string CommandPath => _command.Path;

    public string? Argument(string name) => _command.ArgumentSymbol(name) is { } argument ? _result.GetValue(argument) : null;

    /// <summary>Every value given for a repeatable option, in order (empty when not given).</summary>
    public IReadOnlyList<string> Strings(string option) =>
        Given(option) && _command.OptionSymbol(option) is Option<string[]> values ? _result.GetValue(values) ?? [] : [];

    /// <summary>Whether the option was given, or has a default value.</summary>
    public bool Has(string option) => Given(option) || _command.OptionNamed(option) is { IsFlag: false, Default: not null };

    public bool Flag(string option) =>
        Value(option) is { } v && !string.Equals(v, "false", StringComparison.OrdinalIgnoreCase);

    public string? String(string option) => Value(option);

    public string Required(string option) =>
        String(option) ?? throw CliException.Usage($"{CommandPath}: --{option} is required");

    public int Int(string option, int min = int.MinValue, int max = int.MaxValue)
    {
        var text = Required(option);
        if (!int.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out int v) || v < min || v > max)
        {
            throw CliException.Usage($"{CommandPath}: --{option} must be an integer between {min} and {max}, not '{text}'");
        }
        return v;
    }

    public long Long(string option, long min = long.MinValue)
    {
        var text = Required(option);
        if (!long.TryParse(text, NumberStyles.Integer, CultureInfo.InvariantCulture, out long v) || v < min)
        {
            throw CliException.Usage($"{CommandPath}: --{option} must be an integer >= {min}, not '{text}'");
        }
        return v;
    }

    public double Double(string option, double min = double.MinValue, double max = double.MaxValue)
    {
        var text = Required(option);
        if (!double.TryParse(text, NumberStyles.Float, CultureInfo.InvariantCulture, out double v) || v < min || v > max)
        {
            throw CliException.Usage($"{CommandPath}: --{option} must be a number between {min} and {max}, not '{text}'");
        }
        return v;
    }

    /// <summary>A byte size such as 2MB, 512KB, 1GiB or 1048576.</summary>
    public long Bytes(string option)
    {
        var text = Required(option);
        return Units.TryParseBytes(text, out long v)
            ? v
            : throw CliException.Usage($"{CommandPath}: --{option} must be a size like 2MB, 64KB or 1048576, not '{text}'");
    }

    /// <summary>A duration such as 50us, 2ms, 1.5s; returned in nanoseconds.</summary>
    public long Nanoseconds(string option)
    {
        var text = Required(option);
        return Units.TryParseDuration(text, out long v)
            ? v
            : throw CliException.Usage($"{CommandPath}: --{option} must be a duration like 50us, 2ms or 1s, not '{text}'");
    }

    public T Choice<T>(string option, IReadOnlyDictionary<string, T> choices)
    {
        var text = Required(option);
        return choices.TryGetValue(text.ToLowerInvariant(), out var v)
            ? v
            : throw CliException.Usage($"{CommandPath}: --{option} must be one of {string.Join(", ", choices.Keys)}, not '{text}'");
    }

    /// <summary>Whether the user gave <paramref name="option"/> (a flag or an option, not its default).</summary>
    public bool Given(string option) => _command.OptionSymbol(option) is { } symbol && _result.GetResult(symbol) is { Implicit: false };

    /// <summary>A valued option's last value or its default; a flag's "true" or "false" when given.</summary>
    private string? Value(string option) => _command.OptionSymbol(option) switch
    {
        Option<string[]> values => _result.GetValue(values) is [.., var last] ? last : null,
        Option<bool> flag when Given(option) => _result.GetValue(flag) ? "true" : "false",
        _ => null,
    };
}
