using Camdoop.Monitoring.Tables;

namespace Camdoop.Monitoring.Queries;

/// <summary>The aggregates a query may apply to a column.</summary>
public enum AggregateKind
{
    None,
    Sum,
    Count,
    Min,
    Max,
    Avg,
}

/// <summary>
/// One output column: a table column (<see cref="Aggregate"/> None; then it must be grouped by) or an aggregate of
/// one (<see cref="Column"/> -1 for count(*)). <see cref="Name"/> is its heading.
/// </summary>
public sealed record SelectItem(string Name, AggregateKind Aggregate, int Column);

/// <summary>A parsed, checked query: <c>select ... from TABLE [where ...] [group by ...] [top K by COLUMN] every INTERVAL</c>.</summary>
public sealed class Query
{
    public required string Text { get; init; }

    public required TableSchema Table { get; init; }

    public required IReadOnlyList<SelectItem> Select { get; init; }

    public Condition? Where { get; init; }

    /// <summary>Table column indices to group by.</summary>
    public required IReadOnlyList<int> GroupBy { get; init; }

    /// <summary>Keep only the K rows with the largest <see cref="TopBy"/> output column; 0 for every row.</summary>
    public int TopK { get; init; }

    /// <summary>Index into <see cref="Select"/> of the column ranked by <see cref="TopK"/>.</summary>
    public int TopBy { get; init; } = -1;

    public required long IntervalNs { get; init; }

    /// <summary>Whether rows are grouped (an aggregate or a group by): then servers combine equal groups on path.</summary>
    public bool IsAggregated => GroupBy.Count > 0 || Select.Any(s => s.Aggregate != AggregateKind.None);

    public IEnumerable<string> Headings => Select.Select(s => s.Name);
}
