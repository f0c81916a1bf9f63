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
