using System.Globalization;
using System.Text;
using Camdoop.Experiments;
using Camdoop.Experiments.Reports;

namespace Camdoop.Cli.Commands;

/// <summary>How `sim run --query` shows and records its queries' rounds: a table per round, a CSV and a chart per query.</summary>
internal static class QueryReport
{
    public static string Describe(IReadOnlyList<SimulatedQueryResult> queries)
    {
        var text = new StringBuilder();
        foreach (var query in queries)
        {
            text.AppendLine(CultureInfo.InvariantCulture, $"\nquery from {query.From}: {query.Query}");
            foreach (var round in query.Rounds)
            {
                text.AppendLine(CultureInfo.InvariantCulture, $"  round {round.Round} at {round.StartedNs / 1e6:0.###} ms: {round.Servers} servers, {round.LatencyNs / 1e3:0.#} us to the asking server");
                text.Append(TextTable.Format(query.Columns, round.Rows, "    "));
            }
        }
        return text.ToString();
    }

    /// <summary>Writes query-K.csv (K from 1) under <paramref name="directory"/>: round, start, latency, servers, then the result's columns.</summary>
    public static List<string> WriteCsv(IReadOnlyList<SimulatedQueryResult> queries, string directory)
    {
        Directory.CreateDirectory(directory);
        var paths = new List<string>();
        for (int k = 0; k < queries.Count; k++)
        {
            var query = queries[k];
            var csv = new StringBuilder();
            csv.AppendLine(string.Join(",", new[] { "round", "started_ms", "latency_us", "servers" }.Concat(query.Columns).Select(Csv)));
            foreach (var round in query.Rounds)
            {
                foreach (var row in round.Rows)
                {
                    string head = string.Create(CultureInfo.InvariantCulture, $"{round.Round},{round.StartedNs / 1e6:0.###},{round.LatencyNs / 1e3:0.#},{round.Servers}");
                    csv.AppendLine(head + "," + string.Join(",", row.Select(Csv)));
                }
            }
            string path = Path.Combine(directory, $"query-{k + 1}.csv");
            File.WriteAllText(path, csv.ToString());
            paths.Add(path);
            if (Chart(query) is { } chart)
            {
                string svg = Path.ChangeExtension(path, ".svg");
                paths.AddRange(chart.Save(svg));
            }
        }
        return paths;
    }

    /// <summary>
    /// The query's last column over simulated time, one line per value of its first column when that is text (a
    /// port, a server, a service), else one line; null when the last column is not a number or there is one round.
    /// </summary>
    private static LineChart? Chart(SimulatedQueryResult query)
    {
        var rows = query.Rounds.SelectMany(r => r.Rows.Select(row => (r.StartedNs, Row: row))).ToList();
        if (query.Rounds.Count < 2 || rows.Count == 0 || !rows.All(r => IsNumber(r.Row[^1])))
        {
            return null;
        }
        bool bySeries = query.Columns.Count > 1 && !IsNumber(rows[0].Row[0]);
        var chart = new LineChart
        {
            Title = query.Query,
            XLabel = "simulated time (ms)",
            YLabel = query.Columns[^1],
            LogY = false,
        };
        foreach (var group in rows.GroupBy(r => bySeries ? r.Row[0] : query.Columns[^1]).OrderBy(g => g.Key, StringComparer.Ordinal))
        {
            chart.Series.Add(new ChartSeries(group.Key, [.. group.Select(r => (r.StartedNs / 1e6, double.Parse(r.Row[^1], CultureInfo.InvariantCulture)))]));
        }
        return chart;
    }

    private static bool IsNumber(string value) => double.TryParse(value, NumberStyles.Float, CultureInfo.InvariantCulture, out _);

    private static string Csv(string value) =>
        value.Contains(',', StringComparison.Ordinal) || value.Contains('"', StringComparison.Ordinal) ? $"\"{value.Replace("\"", "\"\"", StringComparison.Ordinal)}\"" : value;
}
