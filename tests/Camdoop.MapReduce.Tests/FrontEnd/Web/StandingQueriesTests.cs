using System.Text.Json;
using Camdoop.ChunkStore;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Web;
using Camdoop.KeyRouting;
using Camdoop.Monitoring.Queries;
using Camdoop.Monitoring.Service;
using Camdoop.Runtime.Frames;
using Camdoop.Runtime.Hosting;
using Camdoop.Runtime.Node;
using Camdoop.Runtime.Topology;

namespace Camdoop.MapReduce.Tests.FrontEnd.Web;

/// <summary>
/// The web view's standing queries on one real server (an event loop with the front-end's services and the
/// monitoring service, no links): the cube's other servers never answer, so every round is this server's alone.
/// </summary>
public sealed class StandingQueriesTests : IDisposable
{
    private const string Links = "select port, up from links every 100ms";
    private readonly NodeEventLoop _loop;
    private readonly MonitorService _monitor = new(jobs: null);
    private readonly StandingQueries _queries;

    public StandingQueriesTests()
    {
        var data = Path.Combine(Path.GetTempPath(), $"camdoop-standing-{Environment.ProcessId}-{Guid.NewGuid():N}");
        DataDirectory = data;
        _loop = new NodeEventLoop(driver => new NodeHost(new Coordinate(0, 0, 0), new Torus(2, 2, 2), driver, new FramePool(), new NodeOptions { DataDirectory = data }));
        KeyRoutingService.Install(_loop.Host);
        PingService.Install(_loop.Host);
        ChunkStoreService.Install(_loop.Host);
        _loop.Host.Register(_monitor);
        _loop.Start();
        var node = new FrontEndNode(_loop, () => Task.FromResult(JsonSerializer.SerializeToElement(new { })));
        // Idle after seconds, not a fraction of one: on a loaded machine a test can be held up that long between a poll
        // and its next look, and must not find its query dropped meanwhile.
        _queries = new StandingQueries(node, idleAfter: TimeSpan.FromSeconds(3), maxQueries: 2);
    }

    private string DataDirectory { get; }

    [Fact]
    public async Task AQueryStartsOnItsFirstPollAndItsRoundsArriveAsAPair()
    {
        // The first round may already be in when the first poll returns (nothing to wait for: no links), never more.
        var first = await _queries.PollAsync(Links);
        Assert.Null(first.Previous);
        Assert.True(first.Latest is null || first.Latest.Round == 1);
        Assert.Equal(1, _queries.Count);
        Assert.Equal(1, await RunningAsync());
        var pair = await WaitForAsync(() => _queries.PollAsync(Links), p => p.Previous is not null, "two rounds");
        Assert.Equal(pair.Previous!.Round + 1, pair.Latest!.Round);
        Assert.True(pair.Latest.StartedAt > pair.Previous.StartedAt);
        // This server's six ports, none up: it has no links.
        Assert.Equal(6, pair.Latest.Rows.Count);
        Assert.All(pair.Latest.Rows, r => Assert.Equal(0, r[1].Number));
        // The same text polled again is the same query, not a second one.
        await _queries.PollAsync(Links);
        Assert.Equal(1, await RunningAsync());
    }

    [Fact]
    public async Task AtMostTheLimitRunAndTheLeastRecentlyPolledGivesWay()
    {
        const string LinksCount = "select count(*) from links every 1s";
        var original = await WaitForAsync(() => _queries.PollAsync(LinksCount), p => p.Latest is not null, "the first round");
        await _queries.PollAsync("select count(*) from servers every 1s");
        await Task.Delay(20);
        await _queries.PollAsync("select count(*) from jobs every 1s");
        Assert.Equal(2, _queries.Count);
        await WaitForAsync(RunningAsync, n => n == 2, "the evicted query to be cancelled");
        // The links query was the one evicted: polling it starts it afresh, its first round after the original's.
        var again = await WaitForAsync(() => _queries.PollAsync(LinksCount), p => p.Latest is not null, "the restarted query's first round");
        Assert.Equal(1, again.Latest!.Round);
        Assert.True(again.Latest.StartedAt > original.Latest!.StartedAt);
        Assert.Equal(2, _queries.Count);
        Assert.Equal(2, await RunningAsync());
    }

    [Fact]
    public async Task AQueryNobodyPollsIsCancelled()
    {
        await _queries.PollAsync(Links);
        Assert.Equal(1, await RunningAsync());
        await WaitForAsync(() => Task.FromResult(_queries.Count), n => n == 0, "the idle query to be dropped");
        await WaitForAsync(RunningAsync, n => n == 0, "the idle query to be cancelled at the monitoring service");
    }

    [Fact]
    public async Task AQueryThatDoesNotParseRunsNothing()
    {
        var error = await Assert.ThrowsAsync<QueryException>(() => _queries.PollAsync("select colour from links every 1s"));
        Assert.StartsWith("unknown column 'colour' in table links", error.Message, StringComparison.Ordinal);
        Assert.Equal(0, _queries.Count);
        Assert.Equal(0, await RunningAsync());
    }

    public void Dispose()
    {
        _queries.Dispose();
        _loop.Dispose();
        if (Directory.Exists(DataDirectory))
        {
            Directory.Delete(DataDirectory, recursive: true);
        }
    }

    private Task<int> RunningAsync() => _loop.InvokeAsync(() => _monitor.Running);

    private static async Task<T> WaitForAsync<T>(Func<Task<T>> read, Func<T, bool> accept, string what)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            var value = await read();
            if (accept(value))
            {
                return value;
            }
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(20), $"timed out waiting for {what}; last {value}");
            await Task.Delay(20);
        }
    }
}
