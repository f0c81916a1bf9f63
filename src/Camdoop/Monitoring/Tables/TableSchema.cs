namespace Camdoop.Monitoring.Tables;

/// <summary>Whether a column holds numbers or texts.</summary>
public enum ColumnKind
{
    Number,
    Text,
}

/// <summary>One column of a monitoring table.</summary>
public sealed record ColumnSchema(string Name, ColumnKind Kind, string Description);

/// <summary>A table every server exposes: its name, what a row is, and its columns in row order.</summary>
public sealed class TableSchema
{
    public TableSchema(string name, string row, params ColumnSchema[] columns)
    {
        Name = name;
        Row = row;
        Columns = columns;
    }

    public string Name { get; }

    /// <summary>What one row stands for ("one port of one server").</summary>
    public string Row { get; }

    public IReadOnlyList<ColumnSchema> Columns { get; }

    /// <summary>The index of <paramref name="name"/> in a row, or -1.</summary>
    public int IndexOf(string name)
    {
        for (int i = 0; i < Columns.Count; i++)
        {
            if (string.Equals(Columns[i].Name, name, StringComparison.OrdinalIgnoreCase))
            {
                return i;
            }
        }
        return -1;
    }
}
