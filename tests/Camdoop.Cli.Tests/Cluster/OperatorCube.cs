using System.Text.Json;
using Camdoop.ChunkStore;
using Camdoop.Cli.Testbed;
using Camdoop.Cli.Tests.Support;
using Camdoop.Hosting;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// A 3x3x3 testbed of its own (prefix "cdk", subnet 213) for the operator commands, with two datasets stored: 5 MB of
/// sort records ("records") and 5 MB of text ("corpus"), and a first job run to warm the nodes up.
/// </summary>
public sealed class OperatorCube : IDisposable
{
    public const string Prefix = "cdk";

    public OperatorCube()
    {
        if (!SystemCommand.IsRoot)
        {
            return; // The tests skip themselves.
        }
        CliRunner.Run("testbed", "down", "--prefix", Prefix);
        Directory.CreateDirectory(WorkDirectory);
        var up = CliRunner.Run("testbed", "up", "--torus", "3x3x3", "--prefix", Prefix, "--subnet", "213", "--json");
        if (up.ExitCode != 0)
        {
            CliRunner.Run("testbed", "down", "--prefix", Prefix);
            throw new InvalidOperationException($"testbed up failed: {up}");
        }
        using (var json = JsonDocument.Parse(up.Stdout))
        {
            FrontEnd = json.RootElement.GetProperty("frontend").GetString()!;
        }
        State = TestbedState.TryLoad(Prefix)!;
        var records = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Sort, Servers = 27, BytesPerServer = 200_000, Seed = 5 });
        Records = Enumerable.Range(0, 27).SelectMany(records.GenerateServer).ToArray();
        var text = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 27, BytesPerServer = 200_000, Seed = 9 });
        Corpus = Enumerable.Range(0, 27).SelectMany(text.GenerateServer).ToArray();
        Put("records", Records, "--format", "records100");
        Put("corpus", Corpus);
        // The nodes' first job compiles their shuffle code; the tests start from warm nodes.
        var warm = Cli("submit", "--job", "wordcount", "--input", "corpus", "--reducers", "27", "--wait");
        if (warm.ExitCode != 0)
        {
            Dispose();
            throw new InvalidOperationException($"the first job failed: {warm}");
        }
    }

    public string FrontEnd { get; } = "";

    public TestbedState State { get; } = null!;

    public byte[] Records { get; } = [];

    public byte[] Corpus { get; } = [];

    public string WorkDirectory { get; } = Path.Combine(Path.GetTempPath(), $"camdoop-operator-{Environment.ProcessId}");

    public CliResult Cli(params string[] args) => CliRunner.Run([.. args, "--frontend", FrontEnd]);

    public void Put(string name, byte[] bytes, params string[] options)
    {
        string path = Path.Combine(WorkDirectory, name);
        File.WriteAllBytes(path, bytes);
        var put = Cli(["put", path, "--name", name, .. options]);
        Assert.True(put.ExitCode == 0, put.ToString());
    }

    /// <summary>Submits without waiting; returns the job id.</summary>
    public string Submit(params string[] args)
    {
        var submit = Cli(["submit", .. args, "--json"]);
        Assert.True(submit.ExitCode == 0, submit.ToString());
        using var json = JsonDocument.Parse(submit.Stdout);
        return json.RootElement.GetProperty("jobId").GetString()!;
    }

    public JsonDocument Status(string jobId)
    {
        var status = Cli("status", jobId, "--json");
        Assert.True(status.ExitCode is 0 or 1, status.ToString());
        return JsonDocument.Parse(status.Stdout);
    }

    public string StateOf(string jobId)
    {
        using var status = Status(jobId);
        return status.RootElement.GetProperty("state").GetString()!;
    }

    /// <summary>
    /// Waits until both jobs are in <paramref name="state"/>, asking in-process every few milliseconds (a CLI process
    /// per question would start too slowly); fails at once when either has ended.
    /// </summary>
    public void WaitForStates(string first, string second, string state)
    {
        using var client = Camdoop.FrontEnd.FrontEndClient.Connect(FrontEnd, Camdoop.FrontEnd.Auth.ClusterKey.Load(State.KeyFile!));
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (true)
        {
            var states = new[] { first, second }.Select(id => client.Call(new Camdoop.FrontEnd.Wire.JobStatusRequest { JobId = id }).State).ToArray();
            Assert.True(states.All(s => s is "mapping" or "shuffling"), $"jobs {first} and {second} are {states[0]} and {states[1]} already");
            if (states.All(s => s == state))
            {
                return;
            }
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(60), $"jobs {first} and {second} are {states[0]} and {states[1]}, not both {state}");
            Thread.Sleep(5);
        }
    }

    /// <summary>Checks a finished job's output (`cat`) against the single-process reference.</summary>
    public void AssertOutputIsTheReference(string jobId, IMapReduceJob job, byte[] input, int reducers)
    {
        string outPath = Path.Combine(WorkDirectory, $"{jobId}.out");
        var cat = Cli("cat", jobId, "--out", outPath);
        Assert.True(cat.ExitCode == 0, cat.ToString());
        var reference = ReferenceMapReduce.Run(job, [input], reducers);
        var expected = Enumerable.Range(0, reducers).SelectMany(reference.Format).ToArray();
        Assert.True(expected.AsSpan().SequenceEqual(File.ReadAllBytes(outPath)), $"job {jobId} ({job.GetType().Name}) output differs from the reference");
    }

    /// <summary>A node's status document.</summary>
    public NodeStatus NodeStatusOf(TestbedServer server) =>
        NodeStatus.TryRead(server.StatusPath) ?? throw new InvalidOperationException($"no status of {server.Coordinate}");

    /// <summary>The replica files (data and metadata) of <paramref name="dataset"/> on every server's disk.</summary>
    public List<string> ChunkFilesOf(string dataset) => State.Servers
        .Select(s => Path.Combine(s.DataDirectory, "chunks"))
        .Where(Directory.Exists)
        .SelectMany(d => Directory.GetFiles(d, "*.meta"))
        .Where(meta => ChunkMeta.TryRead(File.ReadAllBytes(meta), out var m, out _) && m!.Dataset == dataset)
        .SelectMany(meta => new[] { meta, Path.ChangeExtension(meta, ".data") })
        .ToList();

    public static void WaitUntil(Func<bool> condition, string failure, int seconds = 60)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!condition())
        {
            Assert.True(clock.Elapsed < TimeSpan.FromSeconds(seconds), failure);
            Thread.Sleep(100);
        }
    }

    public void Dispose()
    {
        if (!SystemCommand.IsRoot)
        {
            return;
        }
        var down = CliRunner.Run("testbed", "down", "--prefix", Prefix);
        if (Directory.Exists(WorkDirectory))
        {
            Directory.Delete(WorkDirectory, recursive: true);
        }
        var left = TestbedNetwork.ListNamespaces().Where(ns => ns.StartsWith(Prefix + "-", StringComparison.Ordinal)).ToList();
        if (down.ExitCode != 0 || left.Count > 0)
        {
            throw new InvalidOperationException($"testbed down left {left.Count} namespaces behind: {down}");
        }
    }

}
