using System.Text.Json;
using Camdoop.Cli.Testbed;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.Hosting;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.Monitoring;

/// <summary>
/// `camdoop query` against a running 3x3x3 testbed of its own (prefix "cdm", subnet 217): a grouped query's result
/// against every node's own status.json.
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed class MonitorTestbedTests(ITestOutputHelper output)
{
    private const string Prefix = "cdm";

    [RootFact]
    public void AGroupedSumOverTheCubeMatchesThePerNodeCounters()
    {
        CliRunner.Run("testbed", "down", "--prefix", Prefix);
        var up = CliRunner.Run("testbed", "up", "--torus", "3x3x3", "--prefix", Prefix, "--subnet", "217", "--no-warm-up", "--json");
        Assert.True(up.ExitCode == 0, up.ToString());
        try
        {
            string frontEnd;
            using (var json = JsonDocument.Parse(up.Stdout))
            {
                frontEnd = json.RootElement.GetProperty("frontend").GetString()!;
            }
            var state = TestbedState.TryLoad(Prefix)!;
            var before = state.Servers.ToDictionary(s => s.Coordinate, s => NodeStatus.TryRead(s.StatusPath)!);

            var query = CliRunner.Run("query", "select server, sum(up) as up, sum(frames_received) as received from links group by server every 1s",
                "--once", "--json", "--frontend", frontEnd);
            Assert.True(query.ExitCode == 0, query.ToString());
            output.WriteLine(query.Stdout);
            var asked = DateTime.UtcNow;

            // Status files written after the query: every counter the query read lies between the two snapshots.
            var after = new Dictionary<string, NodeStatus>();
            var clock = System.Diagnostics.Stopwatch.StartNew();
            while (after.Count < state.Servers.Count)
            {
                Assert.True(clock.Elapsed < TimeSpan.FromSeconds(30), "status files are not being rewritten");
                foreach (var server in state.Servers)
                {
                    if (NodeStatus.TryRead(server.StatusPath) is { } status && status.UpdatedUtc > asked)
                    {
                        after[server.Coordinate] = status;
                    }
                }
                Thread.Sleep(100);
            }

            using var result = JsonDocument.Parse(query.Stdout);
            var round = result.RootElement;
            Assert.Equal(27, round.GetProperty("servers").GetInt64());
            Assert.Equal(["server", "up", "received"], round.GetProperty("columns").EnumerateArray().Select(c => c.GetString()));
            var rows = round.GetProperty("rows").EnumerateArray().Select(r => r.EnumerateArray().Select(v => v.GetString()!).ToArray()).ToList();
            Assert.Equal(27, rows.Count);
            foreach (var row in rows)
            {
                var first = before[row[0]];
                var last = after[row[0]];
                // Links stay up throughout: the exact count.
                Assert.Equal(last.LinksUp, long.Parse(row[1], System.Globalization.CultureInfo.InvariantCulture));
                Assert.Equal(6, last.LinksUp);
                long received = long.Parse(row[2], System.Globalization.CultureInfo.InvariantCulture);
                Assert.InRange(received, first.Links.Sum(l => l.FramesReceived), last.Links.Sum(l => l.FramesReceived));
            }
            // The cube-wide sum is the sum of the servers' sums, within the same bounds.
            long total = rows.Sum(r => long.Parse(r[2], System.Globalization.CultureInfo.InvariantCulture));
            Assert.InRange(total, before.Values.Sum(s => s.Links.Sum(l => l.FramesReceived)), after.Values.Sum(s => s.Links.Sum(l => l.FramesReceived)));

            var bad = CliRunner.Run("query", "select nothing from links every 1s", "--once", "--frontend", frontEnd);
            Assert.Equal(2, bad.ExitCode);
        }
        finally
        {
            CliRunner.Run("testbed", "down", "--prefix", Prefix);
        }
    }
}
