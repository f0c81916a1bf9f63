using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Tables;

namespace Camdoop.Simulator.Tests.Monitoring;

/// <summary>A query's operators over made-up rows, against the same answer computed directly with LINQ.</summary>
public sealed class QueryPlanTests
{
    private static readonly TableSchema Links = MonitorTables.Links;

    /// <summary>Rows of links tables of <paramref name="servers"/> servers with varied counters.</summary>
    private static List<List<QueryValue[]>> Servers(int servers)
    {
        var random = new Random(5);
        var tables = new List<List<QueryValue[]>>();
        string[] ports = ["+X", "-X", "+Y", "-Y", "+Z", "-Z"];
        for (int s = 0; s < servers; s++)
        {
            var rows = new List<QueryValue[]>();
            foreach (var port in ports)
            {
                var row = new QueryValue[Links.Columns.Count];
                row[Links.IndexOf("server")] = $"{s},0,0";
                row[Links.IndexOf("port")] = port;
                row[Links.IndexOf("neighbour")] = "0,0,0";
                row[Links.IndexOf("up")] = random.Next(4) == 0 ? 0 : 1;
                foreach (var c in new[] { "frames_sent", "bytes_sent", "frames_received", "bytes_received", "queue_depth", "drops", "busy_ns" })
                {
                    row[Links.IndexOf(c)] = random.Next(1000);
                }
                rows.Add(row);
            }
            tables.Add(rows);
        }
        return tables;
    }

    /// <summary>Merges per-server partials as a chain of subtrees would (each hop merges what it has with what it gets).</summary>
    private static List<QueryValue[]> RunOverTree(QueryPlan plan, List<List<QueryValue[]>> tables)
    {
        var carried = new List<QueryValue[]>();
        foreach (var table in tables)
        {
            carried = plan.Merge(plan.Local(table), carried);
        }
        return plan.Finish(carried);
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public void GroupedAggregatesEqualTheDirectComputation(bool combine)
    {
        var tables = Servers(9);
        var plan = new QueryPlan(QueryParser.Parse("select port, sum(bytes_sent), count(*), min(drops), max(busy_ns), avg(frames_sent) from links where up = 1 group by port every 1s"), combine);
        var result = RunOverTree(plan, tables);
        var expected = tables.SelectMany(t => t)
            .Where(r => r[Links.IndexOf("up")].Number == 1)
            .GroupBy(r => r[Links.IndexOf("port")].Text!)
            .OrderBy(g => g.Key, StringComparer.Ordinal)
            .Select(g => new[]
            {
                g.Key,
                g.Sum(r => r[Links.IndexOf("bytes_sent")].Number).ToString(),
                g.Count().ToString(),
                g.Min(r => r[Links.IndexOf("drops")].Number).ToString(),
                g.Max(r => r[Links.IndexOf("busy_ns")].Number).ToString(),
                QueryValue.Of(g.Average(r => r[Links.IndexOf("frames_sent")].Number)).ToString(),
            })
            .ToList();
        Assert.Equal(expected, result.Select(r => r.Select(v => v.ToString()).ToArray()).ToList());
    }

    [Fact]
    public void CombiningKeepsOnePartialRowPerGroupWhateverTheSubtree()
    {
        var tables = Servers(20);
        var plan = new QueryPlan(QueryParser.Parse("select port, sum(bytes_sent) from links group by port every 1s"), combineOnPath: true);
        var carried = new List<QueryValue[]>();
        foreach (var table in tables)
        {
            carried = plan.Merge(plan.Local(table), carried);
            Assert.Equal(6, carried.Count);
        }
        var forwarding = new QueryPlan(plan.Query, combineOnPath: false);
        var all = new List<QueryValue[]>();
        foreach (var table in tables)
        {
            all = forwarding.Merge(forwarding.Local(table), all);
        }
        Assert.Equal(6 * tables.Count, all.Count);
    }

    [Fact]
    public void TopKOverRowsKeepsTheLargest()
    {
        var tables = Servers(9);
        var plan = new QueryPlan(QueryParser.Parse("select server, port, bytes_sent from links top 4 by bytes_sent every 1s"));
        var result = RunOverTree(plan, tables);
        var expected = tables.SelectMany(t => t).Select(r => r[Links.IndexOf("bytes_sent")].Number).OrderDescending().Take(4).ToList();
        Assert.Equal(expected, result.Select(r => r[2].Number).ToList());
    }
}
