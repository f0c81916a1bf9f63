using System.Collections.Concurrent;
using System.Diagnostics;
using Camdoop.Cli.Tests.Support;
using Camdoop.FrontEnd;
using Camdoop.FrontEnd.Wire;
using Camdoop.Hosting;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Tests.Fuzz;

/// <summary>A 3x3x3 testbed of its own (prefix "cdz", subnet 212) with a text corpus stored.</summary>
public sealed class FrontDoorCube : EmulatedCube
{
    public const string Prefix = "cdz";

    private readonly ConcurrentDictionary<int, byte[]> _references = new();

    public FrontDoorCube()
        : base(Prefix, 212)
    {
        var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 27, BytesPerServer = 100_000, Seed = 34 });
        Corpus = Enumerable.Range(0, 27).SelectMany(generator.GenerateServer).ToArray();
        SetUp(() => Put("corpus", Corpus));
    }

    public byte[] Corpus { get; }

    /// <summary>The server's status written after now (status.json is rewritten every second).</summary>
    public NodeStatus FreshStatus(Coordinate server)
    {
        var now = DateTime.UtcNow;
        return WaitForStatus(server, s => s.UpdatedUtc > now);
    }

    /// <summary>
    /// The server's status once it has read everything sent before <paramref name="sentBy"/>: written after that,
    /// and its rejected-frame count no longer moving between two writes.
    /// </summary>
    public NodeStatus SettledStatus(Coordinate server, DateTime sentBy)
    {
        var last = WaitForStatus(server, s => s.UpdatedUtc > sentBy.AddSeconds(1));
        while (true)
        {
            var next = WaitForStatus(server, s => s.UpdatedUtc > last.UpdatedUtc);
            if (next.Counters["node"]["framesRejected"] == last.Counters["node"]["framesRejected"])
            {
                return next;
            }
            last = next;
        }
    }

    private NodeStatus WaitForStatus(Coordinate server, Func<NodeStatus, bool> condition)
    {
        string path = Server(server.Name).StatusPath;
        var clock = Stopwatch.StartNew();
        while (true)
        {
            if (NodeStatus.TryRead(path) is { } status && condition(status))
            {
                return status;
            }
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(60), $"no new status from {server.Name} for 60 s");
            Thread.Sleep(100);
        }
    }

    /// <summary>Every node process is alive and says it is running with six links up.</summary>
    public void AssertEveryServerRuns()
    {
        var now = DateTime.UtcNow;
        foreach (var server in State.Servers)
        {
            Assert.True(Coordinate.TryParse(server.Coordinate, out var coordinate));
            var status = WaitForStatus(coordinate, s => s.UpdatedUtc > now);
            Assert.True(Directory.Exists($"/proc/{server.Pid}") && status.Pid == server.Pid, $"node {server.Coordinate} is gone");
            Assert.Equal("running", status.State);
            Assert.Equal(6, status.LinksUp);
        }
    }

    /// <summary>
    /// Checks a finished job's output against the reference, read over <paramref name="client"/> the way `cat` reads
    /// it: dozens of jobs, or hundreds on a busy machine, and a `cat` process for each would take longer than the
    /// fuzzing itself (`cat` is tested on the other testbeds).
    /// </summary>
    public void AssertOutputIsTheReference(FrontEndClient client, string jobId, int reducers)
    {
        // Dozens of jobs share two values of R: the reference runs once for each.
        var expected = _references.GetOrAdd(reducers, r =>
        {
            var reference = ReferenceMapReduce.Run(new WordCountJob(), [Corpus], r);
            return Enumerable.Range(0, r).SelectMany(reference.Format).ToArray();
        });
        var status = client.Call(new JobStatusRequest { JobId = jobId });
        Assert.Equal("done", status.State);
        Assert.Equal((long)reducers, status.Reducers);
        using var actual = new MemoryStream();
        for (long r = 0; r < reducers; r++)
        {
            client.Call(new JobPartRequest { JobId = jobId, ReduceTask = r }, part => actual.Write(part.Data.Span));
        }
        Assert.True(expected.AsSpan().SequenceEqual(actual.ToArray()), $"job {jobId} (R={reducers}) output differs from the reference");
    }
}
