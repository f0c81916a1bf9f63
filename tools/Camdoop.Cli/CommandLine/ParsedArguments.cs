using System.Globalization;

namespace Camdoop.Cli.CommandLine;

/// <summary>Parsed --options and positional arguments of one command invocation, with typed accessors.</summary>
public sealed class ParsedArguments
{
    private readonly Dictionary<string, string?> _values = new(StringComparer.Ordinal);
    private readonly Dictionary<string, string> _arguments = new(StringComparer.Ordinal);
    private readonly Dictionary<string, List<string>> _repeated = new(StringComparer.Ordinal);
    private readonly Command _command;

    private ParsedArguments(Command command)
    {
        _command = command;
    }

    public string CommandPath => _command.Path;

    internal static ParsedArguments Parse(Command command, string[] args)
    {
        var arguments = command.Arguments;
        var parsed = new ParsedArguments(command);
        int positional = 0;
        for (int i = 0; i < args.Length; i++)
        {
            string a = args[i];
            if (a.StartsWith("--", StringComparison.Ordinal))
            {
                string name = a[2..];
                string? inline = null;
                int eq = name.IndexOf('=', StringComparison.Ordinal);
                if (eq >= 0)
                {
                    inline = name[(eq + 1)..];
                    name = name[..eq];
                }
                var spec = command.Options.FirstOrDefault(o => o.Name == name)
                    ?? throw CliException.Usage($"{command.Path}: unknown option --{name} (see '{command.Path} --help')");
                if (spec.IsFlag)
                {
                    parsed._values[name] = inline ?? "true";
                }
                else
                {
                    if (inline is null)
                    {
                        if (i + 1 >= args.Length)
                        {
                            throw CliException.Usage($"{command.Path}: --{name} needs a value <{spec.ValueName}>");
                        }
                        inline = args[++i];
                    }
                    parsed._values[name] = inline;
                    if (!parsed._repeated.TryGetValue(name, out var all))
                    {
                        parsed._repeated[name] = all = [];
                    }
                    all.Add(inline);
                }
            }
            else
            {
                if (positional >= arguments.Count)
                {
                    throw CliException.Usage($"{command.Path}: unexpected argument '{a}' (see '{command.Path} --help')");
                }
                parsed._arguments[arguments[positional++].Name] = a;
            }
        }
        for (int p = positional; p < arguments.Count; p++)
        {
            if (arguments[p].Required)
            {
                throw CliException.Usage($"{command.Path}: missing argument <{arguments[p].Name}>");
            }
        }
        foreach (var o in command.Options)
        {
            if (!parsed._values.ContainsKey(o.Name) && o.Default is not null && !o.IsFlag)
            {
                parsed._values[o.Name] = o.Default;
            }
        }
        return parsed;
    }

    public string? Argument(string name) => _arguments.GetValueOrDefault(name);

    /// <summary>Every value given for a repeatable option, in order (empty when not given).</summary>
    public IReadOnlyList<string> Strings(string option) => _repeated.GetValueOrDefault(option) ?? [];

    public bool Has(string option) => _values.ContainsKey(option);

    public bool Flag(string option) =>
        _values.TryGetValue(option, out var v) && !string.Equals(v, "false", StringComparison.OrdinalIgnoreCase);

    public string? String(string option) => _values.GetValueOrDefault(option);

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
}
