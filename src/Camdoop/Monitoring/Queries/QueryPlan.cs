using Camdoop.Monitoring.Tables;

namespace Camdoop.Monitoring.Queries;

/// <summary>
/// How a query runs on the servers (the HONE paper's FilterSet, MapSet and ReduceSet, then MergeHosts). Each server
/// turns its table into partial rows (<see cref="Local"/>): for a grouped query one row per group, its key columns
/// then each aggregate's state (sum, count, min, max; avg as sum and count), for an ungrouped query the selected
/// columns. Partial rows merge (<see cref="Merge"/>): grouped rows with equal keys combine, and ungrouped rows under
/// a top-k keep only the best k, so a server on the tree forwards at most one row per group (or k rows) whatever the
/// size of its subtree. Without combining, rows are only concatenated and the asking server folds them
/// (<see cref="Finish"/>); the result is the same.
/// </summary>
public sealed class QueryPlan
{
    private readonly int[] _slotStart;
    private readonly int _slots;

    public QueryPlan(Query query, bool combineOnPath = true)
    {
        ArgumentNullException.ThrowIfNull(query);
        Query = query;
        CombineOnPath = combineOnPath;
        _slotStart = new int[query.Select.Count];
        int slot = query.GroupBy.Count;
        for (int i = 0; i < query.Select.Count; i++)
        {
            _slotStart[i] = slot;
            slot += query.Select[i].Aggregate switch
            {
                AggregateKind.None => 0,
                AggregateKind.Avg => 2,
                _ => 1,
            };
        }
        _slots = slot;
    }

    public Query Query { get; }

    /// <summary>Whether servers on the tree combine what they forward (else the asking server does it all).</summary>
    public bool CombineOnPath { get; }

    /// <summary>Values in one partial row.</summary>
    public int PartialWidth => Query.IsAggregated ? _slots : Query.Select.Count;

    /// <summary>This server's partial rows from its table's rows.</summary>
    public List<QueryValue[]> Local(List<QueryValue[]> tableRows)
    {
        ArgumentNullException.ThrowIfNull(tableRows);
        var partial = new List<QueryValue[]>();
        foreach (var row in tableRows)
        {
            if (Query.Where is { } where && !where.Holds(row))
            {
                continue;
            }
            partial.Add(Query.IsAggregated ? ToPartial(row) : Project(row));
        }
        // A server's own rows always combine: they are one server's contribution, not a subtree's.
        return Query.IsAggregated ? Fold(partial) : TrimTop(partial);
    }

    /// <summary>Adds <paramref name="incoming"/> partial rows to <paramref name="rows"/>, combining them when the plan combines on path.</summary>
    public List<QueryValue[]> Merge(List<QueryValue[]> rows, List<QueryValue[]> incoming)
    {
        ArgumentNullException.ThrowIfNull(rows);
        ArgumentNullException.ThrowIfNull(incoming);
        rows.AddRange(incoming);
        if (!CombineOnPath)
        {
            return rows;
        }
        return Query.IsAggregated ? Fold(rows) : TrimTop(rows);
    }

    /// <summary>The result rows, in <see cref="Query.Select"/> order, from every partial row that reached the asking server.</summary>
    public List<QueryValue[]> Finish(List<QueryValue[]> partial)
    {
        ArgumentNullException.ThrowIfNull(partial);
        List<QueryValue[]> rows;
        if (Query.IsAggregated)
        {
            rows = [.. Fold([.. partial]).Select(Output)];
        }
        else
        {
            rows = [.. partial];
        }
        rows.Sort(CompareRows);
        if (Query.TopK > 0)
        {
            int by = Query.TopBy;
            // Stable: equal values keep the sorted order above.
            rows = [.. rows.OrderByDescending(r => r[by]).Take(Query.TopK)];
        }
        return rows;
    }

    private QueryValue[] Project(QueryValue[] row)
    {
        var projected = new QueryValue[Query.Select.Count];
        for (int i = 0; i < projected.Length; i++)
        {
            projected[i] = row[Query.Select[i].Column];
        }
        return projected;
    }

    private QueryValue[] ToPartial(QueryValue[] row)
    {
        var partial = new QueryValue[_slots];
        for (int k = 0; k < Query.GroupBy.Count; k++)
        {
            partial[k] = row[Query.GroupBy[k]];
        }
        for (int i = 0; i < Query.Select.Count; i++)
        {
            var item = Query.Select[i];
            int s = _slotStart[i];
            var value = item.Column >= 0 ? row[item.Column] : QueryValue.Of(1);
            switch (item.Aggregate)
            {
                case AggregateKind.Sum:
                case AggregateKind.Min:
                case AggregateKind.Max:
                    partial[s] = value;
                    break;
                case AggregateKind.Count:
                    partial[s] = value.IsNull ? 0 : 1;
                    break;
                case AggregateKind.Avg:
                    partial[s] = value;
                    partial[s + 1] = value.IsNull ? 0 : 1;
                    break;
            }
        }
        return partial;
    }

    /// <summary>Combines grouped partial rows with equal keys.</summary>
    private List<QueryValue[]> Fold(List<QueryValue[]> rows)
    {
        int keys = Query.GroupBy.Count;
        var byKey = new Dictionary<GroupKey, QueryValue[]>();
        var order = new List<QueryValue[]>();
        foreach (var row in rows)
        {
            var key = new GroupKey(row, keys);
            if (!byKey.TryGetValue(key, out var into))
            {
                into = (QueryValue[])row.Clone();
                byKey.Add(new GroupKey(into, keys), into);
                order.Add(into);
                continue;
            }
            for (int i = 0; i < Query.Select.Count; i++)
            {
                int s = _slotStart[i];
                switch (Query.Select[i].Aggregate)
                {
                    case AggregateKind.Sum:
                    case AggregateKind.Count:
                        into[s] = Add(into[s], row[s]);
                        break;
                    case AggregateKind.Avg:
                        into[s] = Add(into[s], row[s]);
                        into[s + 1] = Add(into[s + 1], row[s + 1]);
                        break;
                    case AggregateKind.Min:
                        into[s] = into[s].IsNull || (!row[s].IsNull && row[s] < into[s]) ? row[s] : into[s];
                        break;
                    case AggregateKind.Max:
                        into[s] = into[s].IsNull || (!row[s].IsNull && row[s] > into[s]) ? row[s] : into[s];
                        break;
                }
            }
        }
        return order;
    }

    private int IndexOfKey(int column)
    {
        for (int k = 0; k < Query.GroupBy.Count; k++)
        {
            if (Query.GroupBy[k] == column)
            {
                return k;
            }
        }
        throw new InvalidOperationException($"column {column} is not grouped by");
    }

    private static QueryValue Add(QueryValue a, QueryValue b) => a.IsNull ? b : b.IsNull ? a : a.Number + b.Number;

    private QueryValue[] Output(QueryValue[] partial)
    {
        var row = new QueryValue[Query.Select.Count];
        for (int i = 0; i < row.Length; i++)
        {
            var item = Query.Select[i];
            int s = _slotStart[i];
            row[i] = item.Aggregate switch
            {
                AggregateKind.None => partial[IndexOfKey(item.Column)],
                AggregateKind.Avg => partial[s + 1].IsNull || partial[s + 1].Number == 0 ? QueryValue.Null : partial[s].Number / partial[s + 1].Number,
                _ => partial[s],
            };
        }
        return row;
    }

    /// <summary>Ungrouped rows under a top-k: only the k best can be in the result, so only they travel on.</summary>
    private List<QueryValue[]> TrimTop(List<QueryValue[]> rows)
    {
        if (Query.TopK == 0 || rows.Count <= Query.TopK)
        {
            return rows;
        }
        int by = Query.TopBy;
        rows.Sort(CompareRows);
        return [.. rows.OrderByDescending(r => r[by]).Take(Query.TopK)];
    }

    private static int CompareRows(QueryValue[] a, QueryValue[] b)
    {
        for (int i = 0; i < a.Length; i++)
        {
            int c = a[i].CompareTo(b[i]);
            if (c != 0)
            {
                return c;
            }
        }
        return 0;
    }

    /// <summary>The first <c>count</c> values of a row, compared by value.</summary>
    private readonly struct GroupKey(QueryValue[] row, int count) : IEquatable<GroupKey>
    {
        private readonly QueryValue[] _row = row;
        private readonly int _count = count;

        public bool Equals(GroupKey other)
        {
            for (int i = 0; i < _count; i++)
            {
                if (!_row[i].Equals(other._row[i]))
                {
                    return false;
                }
            }
            return true;
        }

        public override bool Equals(object? obj) => obj is GroupKey k && Equals(k);

        public override int GetHashCode()
        {
            var hash = default(HashCode);
            for (int i = 0; i < _count; i++)
            {
                hash.Add(_row[i]);
            }
            return hash.ToHashCode();
        }
    }
}
