using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Tables;

namespace Camdoop.Simulator.Tests.Monitoring;

public sealed class QueryParserTests
{
    [Fact]
    public void ParsesEveryClause()
    {
        var q = QueryParser.Parse("SELECT port, sum(bytes_sent) AS sent, count(*) FROM links WHERE up = 1 AND (port = '+x' OR not drops > 0) GROUP BY port TOP 3 BY sent EVERY 500ms");
        Assert.Same(MonitorTables.Links, q.Table);
        Assert.Equal(["port", "sent", "count(*)"], q.Headings);
        Assert.Equal([AggregateKind.None, AggregateKind.Sum, AggregateKind.Count], q.Select.Select(s => s.Aggregate));
        Assert.Equal(-1, q.Select[2].Column);
        Assert.Equal([MonitorTables.Links.IndexOf("port")], q.GroupBy);
        Assert.Equal(3, q.TopK);
        Assert.Equal(1, q.TopBy);
        Assert.Equal(500_000_000, q.IntervalNs);
        Assert.True(q.IsAggregated);
        var row = new QueryValue[MonitorTables.Links.Columns.Count];
        row[MonitorTables.Links.IndexOf("up")] = 1;
        row[MonitorTables.Links.IndexOf("port")] = "+X";
        row[MonitorTables.Links.IndexOf("drops")] = 5;
        Assert.True(q.Where!.Holds(row));
        row[MonitorTables.Links.IndexOf("port")] = "-Y";
        Assert.False(q.Where.Holds(row));
        row[MonitorTables.Links.IndexOf("drops")] = 0;
        Assert.True(q.Where.Holds(row));
    }

    [Fact]
    public void StarSelectsEveryColumnUngrouped()
    {
        var q = QueryParser.Parse("select * from servers every 2s");
        Assert.Equal(MonitorTables.Servers.Columns.Select(c => c.Name), q.Headings);
        Assert.False(q.IsAggregated);
        Assert.Equal(2_000_000_000, q.IntervalNs);
    }

    [Theory]
    [InlineData("select * from links", "select * from links every 1s")]
    [InlineData("  select port from links where port = 'every'  ", "  select port from links where port = 'every' every 1s")]
    [InlineData("select * from servers every 2s", "select * from servers every 2s")]
    [InlineData("select * from servers EVERY 2s", "select * from servers EVERY 2s")]
    [InlineData("select * from links every", "select * from links every")]
    public void AQueryWithoutAnIntervalGetsTheDefaultOne(string given, string expected)
    {
        Assert.Equal(expected, QueryParser.WithDefaultInterval(given));
    }

    [Fact]
    public void TheDefaultIntervalParsesAsOneSecond()
    {
        var q = QueryParser.Parse(QueryParser.WithDefaultInterval("select * from links"));
        Assert.Same(MonitorTables.Links, q.Table);
        Assert.Equal(1_000_000_000, q.IntervalNs);
        // A bad query stays bad: its problem is still the first one named.
        var e = Assert.Throws<QueryException>(() => QueryParser.Parse(QueryParser.WithDefaultInterval("select colour from links")));
        Assert.Contains("unknown column 'colour'", e.Message, StringComparison.Ordinal);
    }

    [Theory]
    [InlineData("", "empty query")]
    [InlineData("select port links every 1s", "malformed query at character 13: expected 'from' after the selected columns, found 'links'")]
    [InlineData("select port from links", "malformed query at character 23: expected 'every' before the interval (every 1s), found the end of the query")]
    [InlineData("select port from links every 1s extra", "expected the end of the query after the interval, found 'extra'")]
    [InlineData("select port from links every 1", "expected a unit after the interval: ms, s or min")]
    [InlineData("select port from links every 0.1ms", "the interval must be from 1ms to 60min")]
    [InlineData("select port from links where up = 'x' every 1s", "'up' is a number: compare it with a number")]
    [InlineData("select port from links where port = 3 every 1s", "'port' is text: compare it with a quoted string")]
    [InlineData("select port from links where port = '+X every 1s", "the string has no closing '")]
    [InlineData("select port from links where port ~ 1 every 1s", "unexpected '~'")]
    [InlineData("select median(port) from links every 1s", "unknown aggregate 'median'")]
    [InlineData("select sum(port) from links every 1s", "'port' is text; only count can take it")]
    [InlineData("select port, sum(bytes_sent) from links every 1s", "column 'port' must be grouped by or inside an aggregate")]
    [InlineData("select * from links group by port every 1s", "'*' selects every column and cannot be grouped")]
    [InlineData("select port, port from links every 1s", "the column 'port' is selected twice")]
    [InlineData("select port from links top 0 by port every 1s", "expected a whole number from 1 to 10000 after 'top'")]
    [InlineData("select port from links top 2 by drops every 1s", "drops is not a selected column")]
    [InlineData("select port from links top 2 by port every 1s", "port is text; rank by a number column")]
    public void AMalformedQueryIsOneClearLine(string text, string expected)
    {
        var e = Assert.Throws<QueryException>(() => QueryParser.Parse(text));
        Assert.Contains(expected, e.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', e.Message);
    }

    [Theory]
    [InlineData("select port from flows every 1s", "unknown table 'flows': the tables are links, services, jobs, servers, storage, metrics")]
    [InlineData("select colour from links every 1s", "unknown column 'colour' in table links: its columns are server, port,")]
    [InlineData("select count(*) from jobs where speed > 1 every 1s", "unknown column 'speed' in table jobs")]
    [InlineData("select count(*) from jobs group by colour every 1s", "unknown column 'colour' in table jobs")]
    public void AnUnknownTableOrColumnIsNamed(string text, string expected)
    {
        var e = Assert.Throws<QueryException>(() => QueryParser.Parse(text));
        Assert.Contains(expected, e.Message, StringComparison.Ordinal);
    }
}
