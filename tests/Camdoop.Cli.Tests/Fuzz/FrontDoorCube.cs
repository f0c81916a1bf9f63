using System.Collections.Concurrent;
using System.Diagnostics;
using System.Text.Json;
using Camdoop.Cli.Testbed;
using Camdoop.Cli.Tests.Support;
using Camdoop.Hosting;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;
using Camdoop.Runtime.Topology;

namespace Camdoop.Cli.Tests.Fuzz;

/// <summary>A fresh 3x3x3 testbed with a text corpus stored, warmed up by one job.</summary>
public sealed class FrontDoorCube : IDisposable
{
    public const string Prefix = "cdz";

    private readonly TestbedState _state = null!;
    private readonly ConcurrentDictionary<int, byte[]> _references = new();
    private readonly string _work = Path.Combine(Path.GetTempPath(), $"camdoop-front-door-{Environment.ProcessId}");

    public FrontDoorCube()
    {
        if (!Camdoop.Cli.Testbed.SystemCommand.IsRoot)
        {
            return; // The tests skip themselves.
        }
        CliRunner.Run("testbed", "down", "--prefix", Prefix);
        Directory.CreateDirectory(_work);
        var up = CliRunner.Run("testbed", "up", "--prefix", Prefix, "--subnet", "212", "--json");
        if (up.ExitCode != 0)
        {
            CliRunner.Run("testbed", "down", "--prefix", Prefix);
            throw new InvalidOperationException($"testbed up failed: {up}");
        }
        using (var json = JsonDocument.Parse(up.Stdout))
        {
            FrontEnd = json.RootElement.GetProperty("frontend").GetString()!;
        }
        _state = TestbedState.TryLoad(Prefix)!;
        var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 27, BytesPerServer = 100_000, Seed = 34 });
        Corpus = Enumerable.Range(0, 27).SelectMany(generator.GenerateServer).ToArray();
        string path = Path.Combine(_work, "corpus.txt");
        File.WriteAllBytes(path, Corpus);
        var put = Cli("put", path, "--name", "corpus");
        Assert.True(put.ExitCode == 0, put.ToString());
        // The nodes' first job compiles their shuffle code: the fuzzing starts on warm nodes.
        var warm = Cli("submit", "--job", "wordcount", "--input", "corpus", "--reducers", "27", "--wait", "--json");
        Assert.True(warm.ExitCode == 0, warm.ToString());
    }

    public string FrontEnd { get; } = "";

    public byte[] Corpus { get; } = [];

    public string WorkDirectory => _work;

    /// <summary>The testbed's cluster key, for clients in the test process.</summary>
    public Camdoop.FrontEnd.Auth.ClusterKey Key => Camdoop.FrontEnd.Auth.ClusterKey.Load(_state.KeyFile!);

    public CliResult Cli(params string[] args) => CliRunner.Run([.. args, "--frontend", FrontEnd]);

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
        string path = _state.Servers.Single(s => s.Coordinate == server.Name).StatusPath;
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

    /// <summary>Writes a file in the cube's work directory and returns its path.</summary>
    public string Write(string name, byte[] bytes)
    {
        string path = Path.Combine(_work, name);
        File.WriteAllBytes(path, bytes);
        return path;
    }

    /// <summary>Every node process is alive and says it is running with six links up.</summary>
    public void AssertEveryServerRuns()
    {
        var now = DateTime.UtcNow;
        foreach (var server in _state.Servers)
        {
            Assert.True(Coordinate.TryParse(server.Coordinate, out var coordinate));
            var status = WaitForStatus(coordinate, s => s.UpdatedUtc > now);
            Assert.True(Directory.Exists($"/proc/{server.Pid}") && status.Pid == server.Pid, $"node {server.Coordinate} is gone");
            Assert.Equal("running", status.State);
            Assert.Equal(6, status.LinksUp);
        }
    }

    public void AssertOutputIsTheReference(string jobId, int reducers)
    {
        string outPath = Path.Combine(_work, $"{jobId}.out");
        var cat = Cli("cat", jobId, "--out", outPath);
        Assert.True(cat.ExitCode == 0, cat.ToString());
        // Dozens of jobs share two values of R: the reference runs once for each.
        var expected = _references.GetOrAdd(reducers, r =>
        {
            var reference = ReferenceMapReduce.Run(new WordCountJob(), [Corpus], r);
            return Enumerable.Range(0, r).SelectMany(reference.Format).ToArray();
        });
        var actual = File.ReadAllBytes(outPath);
        File.Delete(outPath);
        Assert.True(expected.AsSpan().SequenceEqual(actual), $"job {jobId} (R={reducers}) output differs from the reference");
    }

    public void Dispose()
    {
        if (!Camdoop.Cli.Testbed.SystemCommand.IsRoot)
        {
            return;
        }
        var down = CliRunner.Run("testbed", "down", "--prefix", Prefix);
        if (Directory.Exists(_work))
        {
            Directory.Delete(_work, recursive: true);
        }
        var left = TestbedNetwork.ListNamespaces().Where(ns => ns.StartsWith(Prefix + "-", StringComparison.Ordinal)).ToList();
        Assert.True(down.ExitCode == 0 && left.Count == 0, $"testbed down left {left.Count} namespaces behind: {down}");
    }
}
