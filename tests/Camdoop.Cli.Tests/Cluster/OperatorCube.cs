using System.Text.Json;
using Camdoop.ChunkStore;
using Camdoop.Cli.Tests.Support;
using Camdoop.MapReduce.DataGen;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// A 3x3x3 testbed of its own (prefix "cdk", subnet 213) for the operator commands, with two datasets stored: 5 MB of
/// sort records ("records") and 5 MB of text ("corpus"). Its servers scrub their replicas every
/// <see cref="ScrubIntervalSeconds"/> seconds, so that a damaged replica is found within a test.
/// </summary>
public sealed class OperatorCube : EmulatedCube
{
    public const string Prefix = "cdk";

    public const int ScrubIntervalSeconds = 10;

    public OperatorCube()
        : base(Prefix, 213, "--torus", "3x3x3", "--scrub-interval", $"{ScrubIntervalSeconds}s")
    {
        var records = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Sort, Servers = 27, BytesPerServer = 200_000, Seed = 5 });
        Records = Enumerable.Range(0, 27).SelectMany(records.GenerateServer).ToArray();
        var text = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 27, BytesPerServer = 200_000, Seed = 9 });
        Corpus = Enumerable.Range(0, 27).SelectMany(text.GenerateServer).ToArray();
        SetUp(() =>
        {
            Put("records", Records, "--format", "records100");
            Put("corpus", Corpus);
        });
    }

    public byte[] Records { get; }

    public byte[] Corpus { get; }

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
        using var client = Camdoop.FrontEnd.FrontEndClient.Connect(FrontEnd, Key);
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

    /// <summary>The replica files (data and metadata) of <paramref name="dataset"/> on every server's disk.</summary>
    public List<string> ChunkFilesOf(string dataset) => State.Servers
        .Select(s => Path.Combine(s.DataDirectory, "chunks"))
        .Where(Directory.Exists)
        .SelectMany(d => Directory.GetFiles(d, "*.meta"))
        .Where(meta => ChunkMeta.TryRead(File.ReadAllBytes(meta), out var m, out _) && m!.Dataset == dataset)
        .SelectMany(meta => new[] { meta, Path.ChangeExtension(meta, ".data") })
        .ToList();
}
