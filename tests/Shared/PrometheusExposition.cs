using System.Globalization;
using System.Text;
using System.Text.RegularExpressions;

namespace Camdoop.Tests.Shared;

/// <summary>One sample line: its metric name, labels and value.</summary>
internal sealed record PrometheusSample(string Name, IReadOnlyDictionary<string, string> Labels, double Value)
{
    public string Label(string name) => Labels.TryGetValue(name, out var value) ? value : "";
}

/// <summary>One metric family: its name, TYPE and HELP (null when absent) and samples, in the order they came.</summary>
internal sealed record PrometheusFamily(string Name, string Type, string? Help, List<PrometheusSample> Samples);

/// <summary>
/// A strict reader of the Prometheus text exposition format 0.0.4, written from its specification (not from the
/// formatter under test), that fails on anything Prometheus would reject or that the format forbids: a line that is
/// no comment, HELP, TYPE or sample; a bad metric or label name, a reserved (__) label, a label value with an escape
/// other than \\, \" and \n; a value Go's ParseFloat would refuse; a family's lines split by another family's, a TYPE
/// after its samples or twice, a second HELP; the same series twice; a text that does not end in a newline.
/// </summary>
internal static partial class PrometheusExposition
{
    private static readonly HashSet<string> Types = ["counter", "gauge", "histogram", "summary", "untyped"];

    public static IReadOnlyList<PrometheusFamily> Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        if (text.Length > 0 && !text.EndsWith('\n'))
        {
            throw new FormatException("the exposition does not end with a newline");
        }
        var families = new List<PrometheusFamily>();
        var byName = new Dictionary<string, PrometheusFamily>(StringComparer.Ordinal);
        var series = new HashSet<string>(StringComparer.Ordinal);
        string[] lines = text.Split('\n');
        for (int n = 0; n < lines.Length - 1; n++)
        {
            string line = lines[n];
            string where = $"line {n + 1} '{(line.Length > 80 ? line[..80] + "..." : line)}'";
            if (line.Length == 0)
            {
                continue;
            }
            if (line.StartsWith('#'))
            {
                var parts = line.Split(' ', 4);
                if (parts.Length >= 3 && parts[0] == "#" && parts[1] is "HELP" or "TYPE")
                {
                    string name = parts[2];
                    Require(MetricName().IsMatch(name), $"{where}: '{name}' is no metric name");
                    var family = Family(name, families, byName, where);
                    if (parts[1] == "TYPE")
                    {
                        Require(parts.Length == 4 && Types.Contains(parts[3]), $"{where}: unknown type");
                        Require(family.Type == "" && family.Samples.Count == 0, $"{where}: TYPE after the family's samples, or twice");
                        byName[name] = families[^1] = family with { Type = parts[3] };
                    }
                    else
                    {
                        Require(family.Help is null, $"{where}: a second HELP");
                        string help = parts.Length == 4 ? parts[3] : "";
                        Require(HelpEscapesAreValid(help), $"{where}: a HELP escape other than \\\\ and \\n");
                        byName[name] = families[^1] = family with { Help = help };
                    }
                }
                continue;
            }
            var sample = ParseSample(line, where);
            var owner = Family(sample.Name, families, byName, where);
            owner.Samples.Add(sample);
            string key = sample.Name + "{" + string.Join(",", sample.Labels.OrderBy(l => l.Key, StringComparer.Ordinal).Select(l => $"{l.Key}={l.Value}")) + "}";
            Require(series.Add(key), $"{where}: the series {key} appears twice");
        }
        return [.. families.Select(f => f.Type == "" ? f with { Type = "untyped" } : f)];
    }

    /// <summary>The family a line of <paramref name="name"/> belongs to: the current one, or a new one that must not have come before.</summary>
    private static PrometheusFamily Family(string name, List<PrometheusFamily> families, Dictionary<string, PrometheusFamily> byName, string where)
    {
        if (families.Count > 0 && families[^1].Name == name)
        {
            return families[^1];
        }
        Require(!byName.ContainsKey(name), $"{where}: the family {name} continues after another family's lines");
        var family = new PrometheusFamily(name, "", null, []);
        families.Add(family);
        byName.Add(name, family);
        return family;
    }

    private static PrometheusSample ParseSample(string line, string where)
    {
        int i = 0;
        while (i < line.Length && line[i] is not ('{' or ' '))
        {
            i++;
        }
        string name = line[..i];
        Require(MetricName().IsMatch(name), $"{where}: '{name}' is no metric name");
        var labels = new Dictionary<string, string>(StringComparer.Ordinal);
        if (i < line.Length && line[i] == '{')
        {
            i++;
            while (true)
            {
                Require(i < line.Length, $"{where}: unterminated labels");
                if (line[i] == '}')
                {
                    i++;
                    break;
                }
                int start = i;
                while (i < line.Length && line[i] != '=')
                {
                    i++;
                }
                string label = line[start..i];
                Require(LabelName().IsMatch(label) && !label.StartsWith("__", StringComparison.Ordinal), $"{where}: '{label}' is no label name");
                Require(i + 1 < line.Length && line[i + 1] == '"', $"{where}: label {label} has no quoted value");
                i += 2;
                var value = new StringBuilder();
                while (true)
                {
                    Require(i < line.Length, $"{where}: unterminated value of {label}");
                    char c = line[i++];
                    if (c == '"')
                    {
                        break;
                    }
                    if (c == '\\')
                    {
                        Require(i < line.Length, $"{where}: a dangling escape");
                        char e = line[i++];
                        value.Append(e switch
                        {
                            '\\' => '\\',
                            '"' => '"',
                            'n' => '\n',
                            _ => throw new FormatException($"{where}: the escape \\{e} in a label value"),
                        });
                        continue;
                    }
                    value.Append(c);
                }
                Require(labels.TryAdd(label, value.ToString()), $"{where}: label {label} twice");
                Require(i < line.Length && line[i] is ',' or '}', $"{where}: expected ',' or '}}' after label {label}");
                if (line[i] == ',')
                {
                    i++;
                }
            }
        }
        Require(i < line.Length && line[i] == ' ', $"{where}: no space before the value");
        var rest = line[(i + 1)..].Split(' ');
        Require(rest.Length is 1 or 2 && (rest.Length == 1 || TimestampMs().IsMatch(rest[1])), $"{where}: expected a value and at most a timestamp");
        return new PrometheusSample(name, labels, ParseValue(rest[0], where));
    }

    /// <summary>A value as Go's strconv.ParseFloat takes it (what Prometheus uses).</summary>
    private static double ParseValue(string text, string where)
    {
        switch (text)
        {
            case "NaN":
                return double.NaN;
            case "+Inf" or "Inf":
                return double.PositiveInfinity;
            case "-Inf":
                return double.NegativeInfinity;
        }
        Require(FloatValue().IsMatch(text), $"{where}: '{text}' is no value");
        return double.Parse(text, NumberStyles.Float, CultureInfo.InvariantCulture);
    }

    private static bool HelpEscapesAreValid(string help)
    {
        for (int i = 0; i < help.Length; i++)
        {
            if (help[i] == '\\')
            {
                if (i + 1 == help.Length || help[i + 1] is not ('\\' or 'n'))
                {
                    return false;
                }
                i++;
            }
        }
        return true;
    }

    private static void Require(bool condition, string failure)
    {
        if (!condition)
        {
            throw new FormatException(failure);
        }
    }

    [GeneratedRegex("^[a-zA-Z_:][a-zA-Z0-9_:]*$")]
    private static partial Regex MetricName();

    [GeneratedRegex("^[a-zA-Z_][a-zA-Z0-9_]*$")]
    private static partial Regex LabelName();

    [GeneratedRegex(@"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")]
    private static partial Regex FloatValue();

    [GeneratedRegex(@"^-?\d+$")]
    private static partial Regex TimestampMs();
}
