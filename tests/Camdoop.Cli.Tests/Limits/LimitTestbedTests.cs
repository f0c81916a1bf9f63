using System.Globalization;
using System.Text.Json;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.MapReduce.Jobs;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.Limits;

/// <summary>
/// Rate limits on a real 3x3x3 cube through the CLI: a limit on the Camdoop service holds within 10 % on every port
/// during a shuffle, measured from the services table, while the chunk store, storing a dataset at the same time, is
/// not held to it; the job's output is exact; the limit lists and lifts; a threshold policy sets one when its query
/// fires.
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed class LimitTestbedTests(LimitCube cube, ITestOutputHelper output) : IClassFixture<LimitCube>
{
    private const long Limit = 10_000_000 / 8;
    private const double IntervalSeconds = 0.5;

    [RootFact]
    public void ACamdoopLimitHoldsWithinTenPercentAndTheChunkStoreKeepsItsShare()
    {
        var set = cube.Cli("limit", "--service", "camdoop", "--rate", "10mbit", "--json");
        Assert.True(set.ExitCode == 0, set.ToString());
        using (var json = JsonDocument.Parse(set.Stdout))
        {
            Assert.Equal(162, json.RootElement.GetProperty("confirmed").GetInt64());
            Assert.Equal(162, json.RootElement.GetProperty("expected").GetInt64());
            Assert.Equal(Limit, json.RootElement.GetProperty("bytesPerSecond").GetInt64());
        }
        var rounds = new List<Dictionary<string, long>>();
        using var sampler = FrontEndClient.Connect(cube.FrontEnd, cube.Key);
        var sampling = Task.Run(() =>
        {
            try
            {
                sampler.Call(new QueryRequest { Query = "select server, service, port, bytes_sent from services where service_id = 3 or service_id = 4 every 500ms" }, part =>
                {
                    var row = part.Rows.ToDictionary(r => $"{r[1]} {r[0]} {r[2]}", r => long.Parse(r[3], CultureInfo.InvariantCulture));
                    lock (rounds)
                    {
                        rounds.Add(row);
                    }
                });
            }
            catch (Exception e) when (e is FrontEndException or IOException or ObjectDisposedException)
            {
                // Stopped by closing the connection.
            }
        });

        string job = cube.Submit("--job", "sort", "--input", "records", "--reducers", "1");
        // The other service's traffic: a dataset stored while the job maps and shuffles.
        var put = Task.Run(() => cube.Put("text", cube.Text, "--chunk-size", "1MB"));
        var wait = cube.Cli("status", job, "--wait");
        put.Wait(TimeSpan.FromMinutes(5));
        Assert.True(wait.ExitCode == 0, wait.ToString());
        sampler.Dispose();
        sampling.Wait(TimeSpan.FromSeconds(10));
        cube.AssertOutputIsTheReference(job, new SortJob(), cube.Records, 1);

        List<Dictionary<string, long>> seen;
        lock (rounds)
        {
            seen = [.. rounds];
        }
        // Per round and port, what each service sent in the interval before.
        double Rate(int round, string key) => (seen[round].GetValueOrDefault(key) - seen[round - 1].GetValueOrDefault(key)) / IntervalSeconds;
        var camdoopPorts = seen[^1].Keys.Where(k => k.StartsWith("camdoop ", StringComparison.Ordinal)).ToList();
        var storePorts = seen[^1].Keys.Where(k => k.StartsWith("chunk-store ", StringComparison.Ordinal)).ToList();
        var busy = Enumerable.Range(1, seen.Count - 1).Where(r => camdoopPorts.Max(k => Rate(r, k)) > Limit / 2.0).ToList();
        output.WriteLine($"{seen.Count} rounds, camdoop busy in rounds {string.Join(",", busy)}");
        Assert.True(busy.Count >= 4, $"the shuffle was busy in only {busy.Count} rounds");

        // The window: the busy rounds but the first and the last, whose intervals may be part idle.
        int from = busy[0], to = busy[^1] - 1;
        double seconds = (to - from) * IntervalSeconds;
        var rates = camdoopPorts.ToDictionary(k => k, k => (seen[to].GetValueOrDefault(k) - seen[from].GetValueOrDefault(k)) / seconds);
        var busiest = rates.MaxBy(r => r.Value);
        output.WriteLine($"window {seconds} s: busiest camdoop queue {busiest.Key} at {busiest.Value * 8 / 1e6:0.00} Mbit/s (limit {Limit * 8 / 1e6} Mbit/s)");
        Assert.All(rates, r => Assert.True(r.Value <= Limit * 1.10, $"{r.Key}: {r.Value * 8 / 1e6:0.00} Mbit/s"));
        Assert.InRange(busiest.Value, Limit * 0.90, Limit * 1.10);

        // Meanwhile the chunk store, storing 16 MB, went well past the limit on some port in a round where the
        // limited service was busy too: it was not held to the limit.
        string Mbit(double rate) => (rate * 8 / 1e6).ToString("0.0", CultureInfo.InvariantCulture);
        var store = Enumerable.Range(1, seen.Count - 1).Select(r => storePorts.Max(k => Rate(r, k))).ToList();
        output.WriteLine($"per round, busiest camdoop / chunk-store queue: {string.Join(", ", Enumerable.Range(1, seen.Count - 1).Select(r => $"{Mbit(camdoopPorts.Max(k => Rate(r, k)))}/{Mbit(store[r - 1])}"))} Mbit/s");
        var together = busy.Select(r => store[r - 1]).ToList();
        Assert.True(together.Max() > 3 * Limit, $"the chunk store peaked at {Mbit(together.Max())} Mbit/s in the rounds the limited shuffle was busy");

        var list = cube.Cli("limit", "--list");
        Assert.True(list.ExitCode == 0, list.ToString());
        Assert.Matches(@"service\s+camdoop\s+10 Mbit/s\s+27\s+162", list.Stdout);
        var clear = cube.Cli("limit", "--clear", "--service", "camdoop");
        Assert.True(clear.ExitCode == 0, clear.ToString());
        Assert.Contains("limit lifted", clear.Stdout, StringComparison.Ordinal);
        Assert.Contains("162 of 162 queues", clear.Stdout, StringComparison.Ordinal);
        Assert.Contains("no rate limits (27/27 servers answered)", cube.Cli("limit", "--list").Stdout, StringComparison.Ordinal);
    }

    [RootFact]
    public void AThresholdPolicySetsItsLimitWhenItsQueryFiresAndNotBefore()
    {
        // Beacons keep every link sending: the first round fires a threshold of zero, no round one of 10^18.
        var quiet = cube.Cli("limit", "--service", "ping", "--rate", "1mbit", "--when", "select max(frames_sent) from links every 200ms", "--above", "1e18", "--rounds", "2");
        Assert.True(quiet.ExitCode == 0, quiet.ToString());
        Assert.Contains("not triggered in 2 rounds; no limit set", quiet.Stdout, StringComparison.Ordinal);
        Assert.DoesNotContain("ping", cube.Cli("limit", "--list").Stdout, StringComparison.Ordinal);

        var fired = cube.Cli("limit", "--service", "ping", "--rate", "1mbit", "--port", "+X", "--when", "select max(frames_sent) from links every 200ms", "--above", "0", "--rounds", "5");
        Assert.True(fired.ExitCode == 0, fired.ToString());
        Assert.Contains("round 1: ", fired.Stderr, StringComparison.Ordinal);
        Assert.Contains("setting the limit", fired.Stderr, StringComparison.Ordinal);
        Assert.Contains("service ping: limit set to 1 Mbit/s on +X; 27 of 27 queues (27 servers x 1 ports) confirm it", fired.Stdout, StringComparison.Ordinal);
        Assert.Matches(@"service\s+ping\s+1 Mbit/s\s+27\s+27", cube.Cli("limit", "--list").Stdout);
        Assert.Equal(0, cube.Cli("limit", "--clear", "--service", "ping").ExitCode);

        // Unknown targets are one line from the front-end; a client without the key is refused as for every op.
        var unknown = cube.Cli("limit", "--service", "teleport", "--rate", "1mbit");
        Support.OneLineError.Assert(unknown, "unknown service 'teleport': this cube runs");
        // The services the cube is managed through are never limited: by name or by id, set or cleared.
        foreach (string[] args in new[] { new[] { "--service", "link-monitor", "--rate", "1mbit" }, ["--service", "5", "--rate", "1mbit"], ["--service", "monitor", "--clear"] })
        {
            var control = cube.Cli(["limit", .. args]);
            Support.OneLineError.Assert(control, "cannot be rate-limited: the cube is managed through it");
        }
        Assert.DoesNotContain("link-monitor", cube.Cli("limit", "--list").Stdout, StringComparison.Ordinal);
        var refused = cube.Cli("limit", "--list", "--certs", cube.Write("not-a-directory", new byte[32]));
        Assert.Equal(1, refused.ExitCode);
        Assert.Single(refused.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
    }

}
