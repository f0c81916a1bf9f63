using Camdoop.FrontEnd.Web;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;
using Camdoop.Monitoring.Tables;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

public sealed class CubeStateTests
{
    private static readonly Torus Cube = new(2, 2, 2);
    private static readonly string[] LinkColumns = ["server", "port", "neighbour", "up", "bytes_sent", "busy_ns"];

    [Fact]
    public void LinkRatesAndBusyFractionsComeFromTheTwoLatestRounds()
    {
        // Half a second apart: 2,000 bytes more is 4,000 B/s; 250 ms more backlog is a link busy half the time.
        var previous = Round(1, 1_000_000_000, LinkColumns,
            [["0,0,0", "+X", "1,0,0", 1, 1_000, 0], ["0,0,0", "-X", "1,0,0", 1, 500, 0], ["1,0,0", "+X", "0,0,0", 1, 9_000, 100]]);
        var latest = Round(2, 1_500_000_000, LinkColumns,
            [["0,0,0", "+X", "1,0,0", 1, 3_000, 250_000_000], ["0,0,0", "-X", "1,0,0", 0, 1_000, 0], ["1,0,0", "+X", "0,0,0", 1, 4_000, 100]]);
        var state = CubeState.Build(Cube, new Coordinate(0, 0, 0), new RoundPair(previous, latest), RoundPair.Empty, RoundPair.Empty, RoundPair.Empty);

        var plusX = state.Links.Single(l => l.Server == "0,0,0" && l.Port == "+X");
        Assert.Equal(4_000, plusX.BytesPerSecond, 6);
        Assert.Equal(0.5, plusX.Busy, 6);
        var minusX = state.Links.Single(l => l.Server == "0,0,0" && l.Port == "-X");
        Assert.False(minusX.Up);
        Assert.Equal(1_000, minusX.BytesPerSecond, 6);
        // A counter that went back (a restarted server) gives no rate rather than a negative one.
        Assert.Equal(0, state.Links.Single(l => l.Server == "1,0,0").BytesPerSecond);
        Assert.Equal(4_000, state.MaxBytesPerSecond, 6);
        Assert.Equal(5_000, state.Servers.Single(s => s.Server == "0,0,0").BytesPerSecond, 6);
        Assert.Equal(2, state.Round);
        Assert.Equal(8, state.ServersInCube);
        Assert.Equal([2, 2, 2], state.Size);
    }

    [Fact]
    public void WithOneRoundThereAreLinksButNoRatesAndEveryServerIsListed()
    {
        var only = Round(1, 5, LinkColumns, [["0,0,0", "+Y", "0,1,0", 1, 7_000, 10]]);
        var servers = Round(1, 5, ["server", "links_up", "jobs_running", "cpu_ms", "memory_bytes"], [["1,1,1", 6, 2, 1_500, 1e8]]);
        var state = CubeState.Build(Cube, new Coordinate(1, 1, 1), new RoundPair(null, only), new RoundPair(null, servers), RoundPair.Empty, RoundPair.Empty);
        Assert.Equal(0, Assert.Single(state.Links).BytesPerSecond);
        Assert.Equal(Cube.All().Select(c => c.Name).Order(), state.Servers.Select(s => s.Server).Order());
        var answered = state.Servers.Single(s => s.Answered);
        Assert.Equal("1,1,1", answered.Server);
        Assert.Equal([1, 1, 1], answered.At);
        Assert.Equal(6, answered.LinksUp);
        Assert.Equal(2, answered.JobsRunning);
        Assert.Equal("1,1,1", state.AskedFrom);
        // No storage round yet: every total is 0.
        Assert.Equal(StorageTotals.None, state.Storage);
    }

    [Fact]
    public void TheStorageQueryTotalsTheServersRowsAndTakesTheMostLostServers()
    {
        // Two servers' storage rows, in the table's column order; each takes the same lost server for lost.
        QueryValue[] a = ["0,0,0", 30, 300_000, 2, 5, 50_000, 1, 0, 0, 1, 1, 30, 300_000, 1, 1, 0];
        QueryValue[] b = ["1,0,0", 27, 270_000, 1, 3, 30_000, 4, 2, 1, 1, 2, 27, 270_000, 2, 1, 1];
        var plan = new QueryPlan(QueryParser.Parse(CubeState.StorageQuery));
        var rows = plan.Finish(plan.Merge(plan.Local([a]), plan.Local([b])));
        var round = new QueryRound(4, [.. plan.Query.Headings], rows, 7, Cube.Count, 10, 20);
        var state = CubeState.Build(Cube, new Coordinate(0, 0, 0), RoundPair.Empty, RoundPair.Empty, RoundPair.Empty, new RoundPair(null, round));
        Assert.Equal(
            new StorageTotals { Servers = 7, Replicas = 57, BytesStored = 570_000, CopiesPending = 3, BytesCopied = 80_000, ServersLost = 1, CorruptFound = 3, Repaired = 2 },
            state.Storage);
    }

    [Fact]
    public void AJobsRowsPerStateMergeIntoOneProgress()
    {
        // job, name, state, reduce_tasks, vertices, vertices_done, reduce_tasks_done, bytes_in, bytes_out, output,
        // output_bytes, started_ms, ended_ms
        QueryValue[][] rows =
        [
            ["00000000000000bb", "sort", "finished", 2, 6, 6, 1, 100, 50, "jobs/00000000000000bb/output", 40, 1_000, 3_000],
            ["00000000000000aa", "wordcount", "running", 3, 10, 4, 0, 1_000, 700, "out", 0, 5_000, 0],
            ["00000000000000aa", "wordcount", "finished", 3, 6, 6, 1, 300, 200, "out", 90, 4_000, 6_000],
            ["00000000000000cc", "median", "finished", 1, 4, 2, 0, 0, 0, "discarded", 0, 2_000, 2_500],
            ["00000000000000cc", "median", "failed", 1, 1, 0, 0, 0, 0, "discarded", 0, 2_000, 2_400],
            ["00000000000000dd", "topk", "stopped", 1, 6, 1, 0, 10, 10, "out", 0, 7_000, 8_000],
        ];
        var jobs = JobProgress.Merge(rows);
        // Running first, then the most recently ended.
        Assert.Equal(["00000000000000aa", "00000000000000dd", "00000000000000bb", "00000000000000cc"], jobs.Select(j => j.Job));
        var running = jobs[0];
        Assert.Equal("running", running.State);
        Assert.Equal("wordcount", running.Name);
        Assert.Equal(16, running.Vertices);
        Assert.Equal(10, running.VerticesDone);
        Assert.Equal(10.0 / 16, running.Progress, 9);
        Assert.Equal(3, running.ReduceTasks);
        Assert.Equal(1, running.ReduceTasksDone);
        Assert.Equal(1_300, running.BytesIn);
        Assert.Equal(900, running.BytesOut);
        Assert.Equal(4_000, running.StartedUnixMs);
        Assert.Equal(0, running.EndedUnixMs);
        Assert.Equal("stopped", jobs[1].State);
        // A job that finished on every server is done, as `camdoop jobs` says, with its output and times.
        var done = jobs[2];
        Assert.Equal("done", done.State);
        Assert.Equal(1.0, done.Progress);
        Assert.Equal("jobs/00000000000000bb/output", done.Output);
        Assert.Equal(40, done.OutputBytes);
        Assert.Equal(1_000, done.StartedUnixMs);
        Assert.Equal(3_000, done.EndedUnixMs);
        Assert.Equal("failed", jobs[3].State);
        Assert.Equal(2_500, jobs[3].EndedUnixMs);
    }

    [Fact]
    public void AFinishedJobStaysOnThePageAsDone()
    {
        var jobs = Round(3, 5, ["job", "name", "state", "reduce_tasks", "vertices", "vertices_done", "reduce_tasks_done", "bytes_in", "bytes_out", "output", "output_bytes", "started_ms", "ended_ms"],
            [["00000000000000ee", "wordcount", "finished", 27, 162 * 27, 162 * 27, 27, 5_000_000, 4_000_000, "jobs/00000000000000ee/output", 1_234_567, 10_000, 12_500]]);
        var state = CubeState.Build(Cube, new Coordinate(0, 0, 0), RoundPair.Empty, RoundPair.Empty, new RoundPair(null, jobs), RoundPair.Empty);
        var job = Assert.Single(state.Jobs);
        Assert.Equal("done", job.State);
        Assert.Equal(27, job.ReduceTasksDone);
        Assert.Equal(1_234_567, job.OutputBytes);
        Assert.Equal(2_500, job.EndedUnixMs - job.StartedUnixMs);
        Assert.Contains("\"state\":\"done\"", System.Text.Json.JsonSerializer.Serialize(state, WebJson.Options), StringComparison.Ordinal);
    }

    private static QueryRound Round(long round, long startedAt, string[] columns, QueryValue[][] rows) =>
        new(round, columns, rows, Cube.Count, Cube.Count, startedAt, startedAt + 2_000_000);
}
