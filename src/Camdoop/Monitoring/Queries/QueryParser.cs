using System.Globalization;
using Camdoop.Monitoring.Tables;

namespace Camdoop.Monitoring.Queries;

/// <summary>
/// Parses and checks a query, close to the HONE paper's language:
/// <c>select ITEM, ... from TABLE [where CONDITION] [group by COLUMN, ...] [top K by COLUMN] every INTERVAL</c>,
/// where an item is a column, <c>*</c>, or <c>sum|count|min|max|avg(COLUMN)</c> (<c>count(*)</c>), optionally
/// <c>as NAME</c>. Anything wrong is one <see cref="QueryException"/> naming the first problem; a query that parses
/// can run.
/// </summary>
public sealed class QueryParser
{
    public const long MinIntervalNs = 1_000_000;
    public const long MaxIntervalNs = 3_600_000_000_000;
    public const int MaxTopK = 10_000;

    /// <summary>The interval of a query run for a fixed number of rounds that names none (<see cref="WithDefaultInterval"/>).</summary>
    public const string DefaultInterval = "1s";

    private readonly List<Token> _tokens;
    private readonly string _text;
    private int _next;

    private QueryParser(string text)
    {
        _text = text;
        _tokens = QueryLexer.Tokens(text);
    }

    public static Query Parse(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        if (string.IsNullOrWhiteSpace(text))
        {
            throw new QueryException("empty query: write select COLUMNS from TABLE ... every INTERVAL");
        }
        return new QueryParser(text.Trim()).ParseQuery();
    }

    /// <summary>
    /// The query as given when it has an <c>every</c> clause, else with <c>every 1s</c> (<see cref="DefaultInterval"/>)
    /// appended: a query asked for a fixed number of rounds (<c>camdoop query --once</c>) need not name an interval.
    /// The result still goes through <see cref="Parse"/>, which names any other problem.
    /// </summary>
    public static string WithDefaultInterval(string text)
    {
        ArgumentNullException.ThrowIfNull(text);
        if (string.IsNullOrWhiteSpace(text) || QueryLexer.Tokens(text).Any(t => t.Is("every")))
        {
            return text;
        }
        return $"{text.TrimEnd()} every {DefaultInterval}";
    }

    private Token Peek => _tokens[_next];

    private Query ParseQuery()
    {
        Expect("select", "at the start");
        var items = new List<(Token Name, AggregateKind Kind, Token? Column, Token? Alias)>();
        do
        {
            items.Add(ParseItem());
        }
        while (Accept(","));
        Expect("from", "after the selected columns");
        var tableToken = ExpectWord("a table name after 'from'");
        var table = MonitorTables.Find(tableToken.Text)
            ?? throw new QueryException($"unknown table '{tableToken.Text}': the tables are {string.Join(", ", MonitorTables.All.Select(t => t.Name))}");
        Condition? where = null;
        if (Accept("where"))
        {
            where = ParseOr(table);
        }
        var groupBy = new List<int>();
        if (Accept("group"))
        {
            Expect("by", "after 'group'");
            do
            {
                groupBy.Add(Column(table, ExpectWord("a column to group by")));
            }
            while (Accept(","));
        }
        Token? topBy = null;
        int topK = 0;
        if (Accept("top"))
        {
            var k = Peek;
            if (k.Kind != TokenKind.Number || k.NumberValue != Math.Floor(k.NumberValue) || k.NumberValue < 1 || k.NumberValue > MaxTopK)
            {
                throw Malformed($"a whole number from 1 to {MaxTopK} after 'top'");
            }
            _next++;
            topK = (int)k.NumberValue;
            Expect("by", "after 'top K'");
            topBy = ExpectWord("the column to rank by after 'top K by'");
        }
        Expect("every", "before the interval (every 1s)");
        long interval = ParseInterval();
        if (Peek.Kind != TokenKind.End)
        {
            throw Malformed("the end of the query after the interval");
        }

        var select = BuildSelect(table, items, groupBy);
        int topIndex = -1;
        if (topBy is { } by)
        {
            topIndex = select.FindIndex(s => string.Equals(s.Name, by.Text, StringComparison.OrdinalIgnoreCase));
            if (topIndex < 0)
            {
                throw new QueryException($"'top {topK} by {by.Text}': {by.Text} is not a selected column (selected: {string.Join(", ", select.Select(s => s.Name))})");
            }
            int column = select[topIndex].Column;
            if (select[topIndex].Aggregate == AggregateKind.None && table.Columns[column].Kind != ColumnKind.Number)
            {
                throw new QueryException($"'top {topK} by {by.Text}': {by.Text} is text; rank by a number column");
            }
        }
        return new Query
        {
            Text = _text,
            Table = table,
            Select = select,
            Where = where,
            GroupBy = groupBy,
            TopK = topK,
            TopBy = topIndex,
            IntervalNs = interval,
        };
    }

    private (Token Name, AggregateKind Kind, Token? Column, Token? Alias) ParseItem()
    {
        var token = Peek;
        if (token.Is("*"))
        {
            _next++;
            return (token, AggregateKind.None, null, null);
        }
        var name = ExpectWord("a column or an aggregate (sum, count, min, max, avg)");
        var kind = AggregateKind.None;
        Token? column = name;
        if (Peek.Is("("))
        {
            kind = name.Text.ToLowerInvariant() switch
            {
                "sum" => AggregateKind.Sum,
                "count" => AggregateKind.Count,
                "min" => AggregateKind.Min,
                "max" => AggregateKind.Max,
                "avg" => AggregateKind.Avg,
                _ => throw new QueryException($"unknown aggregate '{name.Text}' at character {name.Position}: use sum, count, min, max or avg"),
            };
            _next++;
            if (Peek.Is("*") && kind == AggregateKind.Count)
            {
                _next++;
                column = null;
            }
            else
            {
                column = ExpectWord($"a column inside {name.Text}(...)");
            }
            Expect(")", $"to close {name.Text}(");
        }
        Token? alias = Accept("as") ? ExpectWord("a name after 'as'") : null;
        return (name, kind, column, alias);
    }

    private static List<SelectItem> BuildSelect(TableSchema table, List<(Token Name, AggregateKind Kind, Token? Column, Token? Alias)> items, List<int> groupBy)
    {
        bool aggregated = groupBy.Count > 0 || items.Any(i => i.Kind != AggregateKind.None);
        var select = new List<SelectItem>();
        foreach (var (name, kind, columnToken, alias) in items)
        {
            if (name.Is("*"))
            {
                if (aggregated)
                {
                    throw new QueryException("'*' selects every column and cannot be grouped: name the grouped columns instead");
                }
                select.AddRange(table.Columns.Select((c, i) => new SelectItem(c.Name, AggregateKind.None, i)));
                continue;
            }
            int column = columnToken is { } t ? Column(table, t) : -1;
            if (kind == AggregateKind.None && aggregated && !groupBy.Contains(column))
            {
                throw new QueryException($"column '{table.Columns[column].Name}' must be grouped by or inside an aggregate (sum, count, min, max, avg)");
            }
            if (kind is AggregateKind.Sum or AggregateKind.Min or AggregateKind.Max or AggregateKind.Avg && table.Columns[column].Kind != ColumnKind.Number)
            {
                throw new QueryException($"{kind.ToString().ToLowerInvariant()}({table.Columns[column].Name}): '{table.Columns[column].Name}' is text; only count can take it");
            }
            string heading = alias?.Text ?? (kind == AggregateKind.None
                ? table.Columns[column].Name
                : $"{kind.ToString().ToLowerInvariant()}({(column < 0 ? "*" : table.Columns[column].Name)})");
            if (select.Any(s => string.Equals(s.Name, heading, StringComparison.OrdinalIgnoreCase)))
            {
                throw new QueryException($"the column '{heading}' is selected twice: rename one with 'as'");
            }
            select.Add(new SelectItem(heading, kind, column));
        }
        return select;
    }

    private Condition ParseOr(TableSchema table)
    {
        var left = ParseAnd(table);
        while (Accept("or"))
        {
            left = new Or(left, ParseAnd(table));
        }
        return left;
    }

    private Condition ParseAnd(TableSchema table)
    {
        var left = ParseUnary(table);
        while (Accept("and"))
        {
            left = new And(left, ParseUnary(table));
        }
        return left;
    }

    private Condition ParseUnary(TableSchema table)
    {
        if (Accept("not"))
        {
            return new Not(ParseUnary(table));
        }
        if (Accept("("))
        {
            var inner = ParseOr(table);
            Expect(")", "to close '('");
            return inner;
        }
        var columnToken = ExpectWord("a column to compare");
        int column = Column(table, columnToken);
        var opToken = Peek;
        var op = opToken.Text switch
        {
            "=" => CompareOp.Equal,
            "!=" or "<>" => CompareOp.NotEqual,
            "<" => CompareOp.Less,
            "<=" => CompareOp.LessOrEqual,
            ">" => CompareOp.Greater,
            ">=" => CompareOp.GreaterOrEqual,
            _ => throw Malformed($"a comparison (=, !=, <, <=, >, >=) after '{columnToken.Text}'"),
        };
        _next++;
        var literal = Peek;
        var kind = table.Columns[column].Kind;
        QueryValue constant;
        if (literal.Kind == TokenKind.Number && kind == ColumnKind.Number)
        {
            constant = literal.NumberValue;
        }
        else if (literal.Kind == TokenKind.String && kind == ColumnKind.Text)
        {
            constant = literal.Text;
        }
        else if (literal.Kind is TokenKind.Number or TokenKind.String)
        {
            throw new QueryException(kind == ColumnKind.Text
                ? $"'{columnToken.Text}' is text: compare it with a quoted string ('{literal.Text}')"
                : $"'{columnToken.Text}' is a number: compare it with a number, not {literal.Describe()}");
        }
        else
        {
            throw Malformed(kind == ColumnKind.Text ? $"a quoted string after '{columnToken.Text} {opToken.Text}'" : $"a number after '{columnToken.Text} {opToken.Text}'");
        }
        _next++;
        return new Comparison(column, op, constant);
    }

    private long ParseInterval()
    {
        var number = Peek;
        if (number.Kind != TokenKind.Number || number.NumberValue <= 0)
        {
            throw Malformed("a positive interval after 'every' (every 1s, every 500ms)");
        }
        _next++;
        var unit = Peek;
        long scale = unit.Kind == TokenKind.Word ? unit.Text.ToLowerInvariant() switch
        {
            "ms" => 1_000_000,
            "s" or "sec" or "second" or "seconds" => 1_000_000_000,
            "m" or "min" or "minute" or "minutes" => 60_000_000_000,
            _ => 0,
        } : 0;
        if (scale == 0)
        {
            throw Malformed("a unit after the interval: ms, s or min");
        }
        _next++;
        double ns = number.NumberValue * scale;
        if (ns < MinIntervalNs || ns > MaxIntervalNs)
        {
            throw new QueryException(string.Create(CultureInfo.InvariantCulture, $"every {number.Text}{unit.Text}: the interval must be from 1ms to 60min"));
        }
        return (long)ns;
    }

    private static int Column(TableSchema table, Token token)
    {
        int index = table.IndexOf(token.Text);
        return index >= 0 ? index
            : throw new QueryException($"unknown column '{token.Text}' in table {table.Name}: its columns are {string.Join(", ", table.Columns.Select(c => c.Name))}");
    }

    private bool Accept(string word)
    {
        if (Peek.Is(word))
        {
            _next++;
            return true;
        }
        return false;
    }

    private void Expect(string word, string where)
    {
        if (!Accept(word))
        {
            throw Malformed($"'{word}' {where}");
        }
    }

    private Token ExpectWord(string what)
    {
        var token = Peek;
        if (token.Kind != TokenKind.Word)
        {
            throw Malformed(what);
        }
        _next++;
        return token;
    }

    private QueryException Malformed(string expected) =>
        new($"malformed query at character {Peek.Position}: expected {expected}, found {Peek.Describe()}");
}
