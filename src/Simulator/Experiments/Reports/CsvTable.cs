using System.Globalization;
using System.Text;

namespace Camdoop.Experiments.Reports;

/// <summary>A small CSV writer (RFC 4180 quoting, invariant culture numbers).</summary>
public sealed class CsvTable
{
    private readonly List<string[]> _rows = [];

    public CsvTable(params string[] header)
    {
        Header = header;
    }

    public IReadOnlyList<string> Header { get; }

    public int RowCount => _rows.Count;

    public void Add(params object[] values)
    {
        if (values.Length != Header.Count)
        {
            throw new ArgumentException($"expected {Header.Count} values, got {values.Length}", nameof(values));
        }
        _rows.Add(values.Select(Format).ToArray());
    }

    public string Render()
    {
        var sb = new StringBuilder();
        sb.AppendJoin(',', Header.Select(Quote)).Append('\n');
        foreach (var row in _rows)
        {
            sb.AppendJoin(',', row.Select(Quote)).Append('\n');
        }
        return sb.ToString();
    }

    public void Save(string path) => File.WriteAllText(path, Render());

    /// <summary>Reads a CSV file as <see cref="Render"/> writes it: the header and every record's fields, unquoted.</summary>
    public static (List<string> Header, List<string[]> Rows) Read(string path) => Parse(File.ReadAllText(path));

    /// <summary>Parses RFC 4180 text: quoted fields may hold commas, doubled quotes and line breaks.</summary>
    public static (List<string> Header, List<string[]> Rows) Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        var records = new List<string[]>();
        var fields = new List<string>();
        var field = new StringBuilder();
        bool quoted = false, any = false;
        for (int i = 0; i < text.Length; i++)
        {
            char c = text[i];
            if (quoted)
            {
                if (c == '"' && i + 1 < text.Length && text[i + 1] == '"')
                {
                    field.Append('"');
                    i++;
                }
                else if (c == '"')
                {
                    quoted = false;
                }
                else
                {
                    field.Append(c);
                }
                continue;
            }
            switch (c)
            {
                case '"':
                    quoted = true;
                    any = true;
                    break;
                case ',':
                    fields.Add(field.ToString());
                    field.Clear();
                    any = true;
                    break;
                case '\r':
                    break;
                case '\n':
                    fields.Add(field.ToString());
                    records.Add([.. fields]);
                    fields.Clear();
                    field.Clear();
                    any = false;
                    break;
                default:
                    field.Append(c);
                    any = true;
                    break;
            }
        }
        if (any || field.Length > 0)
        {
            fields.Add(field.ToString());
            records.Add([.. fields]);
        }
        return records.Count == 0 ? ([], []) : ([.. records[0]], records.Skip(1).ToList());
    }

    private static string Format(object v) => v switch
    {
        double d => d.ToString("R", CultureInfo.InvariantCulture),
        float f => f.ToString("R", CultureInfo.InvariantCulture),
        IFormattable f => f.ToString(null, CultureInfo.InvariantCulture),
        _ => v.ToString() ?? "",
    };

    private static string Quote(string s) =>
        s.AsSpan().IndexOfAny(",\"\n\r") >= 0 ? "\"" + s.Replace("\"", "\"\"", StringComparison.Ordinal) + "\"" : s;
}
