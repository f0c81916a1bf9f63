using System.Text.Json;
using Camdoop.ChunkStore;
using Camdoop.Cli.Testbed;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;
using Camdoop.Records;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// Data outlives servers on the real cube: a server whose disk is replaced gets its share back; a server killed for
/// good has its replicas made again once the grace period is over, so that when two more servers holding copies of
/// one of its chunks die, the dataset still reads back byte for byte and a job over it gives the reference output. A
/// decommissioned server, once said safe, is switched off with every chunk still held three times.
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed class ReReplicationTestbedTests(ITestOutputHelper output)
{
    private const string Prefix = "cdrr";
    private static readonly TimeSpan Patience = TimeSpan.FromSeconds(120);

    [RootFact]
    public void AReplacedServerGetsItsShareAndALostServersReplicasAreMadeAgain()
    {
        string work = Path.Combine(Path.GetTempPath(), $"camdoop-rereplicate-{Environment.ProcessId}");
        CliRunner.Run("testbed", "down", "--prefix", Prefix);
        Directory.CreateDirectory(work);
        var up = CliRunner.Run("testbed", "up", "--prefix", Prefix, "--subnet", "214", "--torus", "3x3x2", "--rereplicate-after", "4s", "--no-warm-up", "--json");
        try
        {
            Assert.True(up.ExitCode == 0, up.ToString());
            var state = TestbedState.TryLoad(Prefix)!;
            string frontEnd = state.FrontEnd;
            var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 18, BytesPerServer = 60_000, Seed = 5 });
            var corpus = Enumerable.Range(0, 18).SelectMany(generator.GenerateServer).ToArray();
            string input = Path.Combine(work, "corpus.txt");
            File.WriteAllBytes(input, corpus);
            var put = CliRunner.Run("put", input, "--name", "corpus", "--chunk-size", "64KB", "--frontend", frontEnd);
            Assert.True(put.ExitCode == 0, put.ToString());
            var before = Holdings(state, new HashSet<string>());
            output.WriteLine($"{before.Count} chunks stored");

            // A new disk in 1,1,1: it gets back exactly what it held, whole.
            var replaced = state.Servers.Single(s => s.Coordinate == "1,1,1");
            var held = before.Where(c => c.Value.Contains("1,1,1")).Select(c => c.Key).ToHashSet();
            Assert.NotEmpty(held);
            var replace = CliRunner.Run("testbed", "replace", "1,1,1", "--prefix", Prefix);
            Assert.True(replace.ExitCode == 0, replace.ToString());
            WaitFor(() => held.SetEquals(ChunksOn(replaced)), "the replaced server to hold its share again");
            AssertWhole(replaced);
            state = TestbedState.TryLoad(Prefix)!;

            // 0,2,0 is decommissioned: once the command says it is safe, switching it off leaves every chunk held three
            // times by the others, with no grace to wait for.
            const string Drained = "0,2,0";
            Assert.Contains(before.Values, h => h.Contains(Drained));
            var drain = CliRunner.Run("decommission", Drained, "--timeout", "90s", "--json", "--frontend", frontEnd);
            Assert.True(drain.ExitCode == 0, drain.ToString());
            using (var report = JsonDocument.Parse(drain.Stdout))
            {
                Assert.True(report.RootElement.GetProperty("safe").GetBoolean(), drain.ToString());
                Assert.Equal(Drained, Assert.Single(report.RootElement.GetProperty("decommissioned").EnumerateArray()).GetString());
            }
            Assert.Equal(0, CliRunner.Run("testbed", "kill", Drained, "--prefix", Prefix).ExitCode);
            HashSet<string> dead = [Drained];
            var afterDrain = Holdings(state, dead);
            Assert.Equal(before.Count, afterDrain.Count);
            Assert.All(afterDrain.Values, h => Assert.True(h.Count >= ChunkPlacement.Replicas, $"held by {string.Join(' ', h)} only"));

            // 2,2,1 dies for good: after the grace, every chunk has three live replicas again.
            const string Lost = "2,2,1";
            Assert.Equal(0, CliRunner.Run("testbed", "kill", Lost, "--prefix", Prefix).ExitCode);
            dead.Add(Lost);
            WaitFor(() => Holdings(state, dead).Values.All(h => h.Count == ChunkPlacement.Replicas), "three live replicas of every chunk");
            // fsck, through a live front-end, agrees: the lost server does not answer, and nothing is under-replicated.
            var live = state.Servers.First(s => s.Coordinate != Lost);
            var fsck = CliRunner.Run("fsck", "--json", "--frontend", $"{live.Address}:{state.FrontEndPort}");
            Assert.True(fsck.ExitCode == 0, fsck.ToString());
            using (var report = JsonDocument.Parse(fsck.Stdout))
            {
                Assert.Equal(before.Count, report.RootElement.GetProperty("chunks").GetInt64() + report.RootElement.GetProperty("datasets").GetArrayLength()); // one manifest each
                Assert.Equal(0, report.RootElement.GetProperty("underReplicated").GetInt64());
                Assert.Equal(0, report.RootElement.GetProperty("missing").GetInt64());
            }

            // Two more die: the other two servers that held a chunk of the lost one when it died.
            var victim = before.First(c => c.Value.Contains(Lost) && !c.Value.Contains(Drained));
            foreach (string other in victim.Value.Where(h => h != Lost))
            {
                Assert.Equal(0, CliRunner.Run("testbed", "kill", other, "--prefix", Prefix).ExitCode);
                dead.Add(other);
            }
            var reader = state.Servers.First(s => !dead.Contains(s.Coordinate));
            string readFrom = $"{reader.Address}:{state.FrontEndPort}";
            string back = Path.Combine(work, "corpus.back");
            var get = CliRunner.Run("get", "corpus", "--out", back, "--frontend", readFrom);
            Assert.True(get.ExitCode == 0, get.ToString());
            Assert.True(corpus.AsSpan().SequenceEqual(File.ReadAllBytes(back)), "the dataset read back differs");

            var submit = CliRunner.Run("submit", "--job", "wordcount", "--input", "corpus", "--reducers", "2", "--wait", "--json", "--frontend", readFrom);
            Assert.True(submit.ExitCode == 0, submit.ToString());
            string jobId;
            using (var json = JsonDocument.Parse(submit.Stdout))
            {
                jobId = json.RootElement.GetProperty("jobId").GetString()!;
            }
            string outPath = Path.Combine(work, "wc.txt");
            Assert.Equal(0, CliRunner.Run("cat", jobId, "--out", outPath, "--frontend", readFrom).ExitCode);
            var reference = ReferenceMapReduce.Run(new WordCountJob(), [corpus], 2);
            Assert.True(Enumerable.Range(0, 2).SelectMany(reference.Format).ToArray().AsSpan().SequenceEqual(File.ReadAllBytes(outPath)), "the job's output differs from the reference");
        }
        finally
        {
            var down = CliRunner.Run("testbed", "down", "--prefix", Prefix);
            output.WriteLine(down.Stdout.Trim());
            if (Directory.Exists(work))
            {
                Directory.Delete(work, recursive: true);
            }
        }
    }

    /// <summary>Every data chunk stored on the servers not in <paramref name="dead"/>, and who holds it.</summary>
    private static Dictionary<string, List<string>> Holdings(TestbedState state, IReadOnlySet<string> dead)
    {
        var holders = new Dictionary<string, List<string>>();
        foreach (var server in state.Servers.Where(s => !dead.Contains(s.Coordinate)))
        {
            foreach (string id in ChunksOn(server))
            {
                if (!holders.TryGetValue(id, out var list))
                {
                    holders[id] = list = [];
                }
                list.Add(server.Coordinate);
            }
        }
        return holders;
    }

    /// <summary>The chunk ids a server's disk holds (committed replicas: data and metadata in place).</summary>
    private static HashSet<string> ChunksOn(TestbedServer server)
    {
        string dir = Path.Combine(server.DataDirectory, "chunks");
        return Directory.Exists(dir)
            ? [.. Directory.GetFiles(dir, "*.meta").Select(p => Path.GetFileNameWithoutExtension(p)).Where(id => File.Exists(Path.Combine(dir, id + ".data")))]
            : [];
    }

    private static void AssertWhole(TestbedServer server)
    {
        foreach (string metaPath in Directory.GetFiles(Path.Combine(server.DataDirectory, "chunks"), "*.meta"))
        {
            Assert.True(ChunkMeta.TryRead(File.ReadAllBytes(metaPath), out var meta, out _), $"{metaPath} is unreadable");
            var bytes = File.ReadAllBytes(Path.ChangeExtension(metaPath, ".data"));
            Assert.True(bytes.Length == meta!.Length && XxHash64.Hash(bytes) == meta.Checksum, $"replica {meta.Id} on {server.Coordinate} is not whole");
        }
    }

    private static void WaitFor(Func<bool> done, string what)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        while (!done())
        {
            Assert.True(clock.Elapsed < Patience, $"timed out after {Patience.TotalSeconds:0} s waiting for {what}");
            Thread.Sleep(500);
        }
    }
}
