using System.Diagnostics;
using System.Text.Json;
using Camdoop.ChunkStore;
using Camdoop.Cli.Testbed;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.MapReduce.DataGen;
using Camdoop.Records;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// Acknowledged data on the real cube: a node process is killed (SIGKILL) while it is writing replicas of a `put`,
/// then started again on its data directory with `testbed start`. The put either completes or fails with one clear
/// line; the restarted server holds no leftover of the cut write, every replica it holds reads back with a good
/// checksum, and the dataset reads back exactly through its own front-end.
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed class DurabilityTestbedTests(ITestOutputHelper output)
{
    private const string Prefix = "cdu";

    /// <summary>The front-end the put goes through: never the victim.</summary>
    private const string FrontEndServer = "0,0,0";

    [RootFact]
    public void ANodeKilledMidPutComesBackServingEveryReplicaIntact()
    {
        string work = Path.Combine(Path.GetTempPath(), $"camdoop-durable-{Environment.ProcessId}");
        CliRunner.Run("testbed", "down", "--prefix", Prefix);
        Directory.CreateDirectory(work);
        // Slow links stretch the put over seconds, so that the kill lands while replicas are being written.
        var up = CliRunner.Run("testbed", "up", "--prefix", Prefix, "--subnet", "211", "--link-rate", "3mbit", "--no-warm-up", "--json");
        try
        {
            Assert.True(up.ExitCode == 0, up.ToString());
            string frontEnd;
            using (var json = JsonDocument.Parse(up.Stdout))
            {
                frontEnd = json.RootElement.GetProperty("frontend").GetString()!;
            }
            var state = TestbedState.TryLoad(Prefix)!;
            Assert.Equal(FrontEndServer, state.Servers.Single(s => s.Address == frontEnd.Split(':')[0]).Coordinate);

            var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 27, BytesPerServer = 200_000, Seed = 3 });
            var corpus = Enumerable.Range(0, 27).SelectMany(generator.GenerateServer).ToArray();
            string input = Path.Combine(work, "corpus.txt");
            File.WriteAllBytes(input, corpus);
            var put = Task.Run(() => CliRunner.Run(TimeSpan.FromMinutes(5), "put", input, "--name", "corpus", "--chunk-size", "768KB", "--frontend", frontEnd));

            // The victim: the first server (not the front-end) that has stored a replica and is writing another. A
            // replica takes about two seconds to cross a 3 Mbit/s link, so the kill lands in the middle of it.
            var clock = Stopwatch.StartNew();
            TestbedServer? victim = null;
            while (victim is null)
            {
                Assert.False(put.IsCompleted, $"the put ended before any server was writing its second replica: {(put.IsCompleted ? put.Result.ToString() : "")}");
                Assert.True(clock.Elapsed < TimeSpan.FromSeconds(120), "no server ever wrote a replica");
                victim = state.Servers.FirstOrDefault(s => s.Coordinate != FrontEndServer && Directory.Exists(Chunks(s))
                    && Directory.GetFiles(Chunks(s), "*.data").Length > 0 && Directory.GetFiles(Chunks(s), "*.part").Length > 0);
                Thread.Sleep(5);
            }
            string victimName = victim.Coordinate;
            string chunks = Chunks(victim);
            // SIGKILL from here, as `testbed kill` does: starting that command takes seconds on a loaded machine, long
            // enough for the write to finish first.
            Assert.True(TestbedLauncher.Kill(victim.Pid), $"{victimName} (pid {victim.Pid}) could not be killed");
            int leftAtKill = Directory.GetFiles(chunks, "*.part*").Length;
            Assert.True(leftAtKill > 0, $"{victimName} had finished its write when it was killed: the test proves nothing");
            // The kill landed mid-write: the rest of the put and reading the dataset back need no slow links.
            TestbedNetwork.Shape(state.Layout(), new LinkShaping(null, 0, 0));

            var result = put.Result;
            output.WriteLine($"put after the kill of {victimName} ({leftAtKill} temporary files left by it): {result}");
            if (result.ExitCode != 0)
            {
                Assert.Equal(1, result.ExitCode);
                var lines = result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries).Where(l => !l.Contains('[', StringComparison.Ordinal)).ToList();
                Assert.True(lines.Count == 1 && !result.Stderr.Contains("   at ", StringComparison.Ordinal), result.ToString());
            }

            var start = CliRunner.Run("testbed", "start", victimName, "--prefix", Prefix);
            Assert.True(start.ExitCode == 0, start.ToString());
            Assert.StartsWith($"server {victimName} of testbed '{Prefix}' started", start.Stdout, StringComparison.Ordinal);
            var again = CliRunner.Run("testbed", "start", victimName, "--prefix", Prefix);
            Assert.Equal(1, again.ExitCode);
            Assert.Contains("is running", again.Stderr, StringComparison.Ordinal);

            // What the killed write left is gone; every replica the server holds is whole.
            Assert.Empty(Directory.GetFiles(chunks, "*.part*"));
            var metas = Directory.GetFiles(chunks, "*.meta");
            Assert.NotEmpty(metas);
            foreach (var metaPath in metas)
            {
                Assert.True(ChunkMeta.TryRead(File.ReadAllBytes(metaPath), out var meta, out _), $"{metaPath} is unreadable");
                var bytes = File.ReadAllBytes(Path.ChangeExtension(metaPath, ".data"));
                Assert.True(bytes.Length == meta!.Length && XxHash64.Hash(bytes) == meta.Checksum, $"replica {meta.Id} on {victimName} reads back wrong");
            }
            Assert.Equal(metas.Length, Directory.GetFiles(chunks, "*.data").Length);

            // Through the restarted server's own front-end, which reads the replicas it holds from its own disk.
            string victimFrontEnd = $"{victim.Address}:{state.FrontEndPort}";
            if (result.ExitCode == 0)
            {
                string back = Path.Combine(work, "corpus.back");
                var get = CliRunner.Run("get", "corpus", "--out", back, "--frontend", victimFrontEnd);
                Assert.True(get.ExitCode == 0, get.ToString());
                Assert.True(corpus.AsSpan().SequenceEqual(File.ReadAllBytes(back)), "the dataset read back differs");
            }
        }
        finally
        {
            var down = CliRunner.Run("testbed", "down", "--prefix", Prefix);
            output.WriteLine(down.Stdout.Trim());
            if (Directory.Exists(work))
            {
                Directory.Delete(work, recursive: true);
            }
            var left = TestbedNetwork.ListNamespaces().Where(ns => ns.StartsWith(Prefix + "-", StringComparison.Ordinal)).ToList();
            Assert.True(down.ExitCode == 0 && left.Count == 0, $"testbed down left {left.Count} namespaces behind: {down}");
        }
    }

    private static string Chunks(TestbedServer server) => Path.Combine(server.DataDirectory, "chunks");
}
