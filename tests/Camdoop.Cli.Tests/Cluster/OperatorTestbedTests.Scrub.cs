using System.Text.Json;
using Camdoop.ChunkStore;
using Camdoop.Cli.Tests.Support;

namespace Camdoop.Cli.Tests.Cluster;

// Scrubbing and fsck on the real cube: a replica damaged on disk while its two other holders are down is found by
// its server's scrubber, cannot be repaired, and fsck reports the chunk lost; once the holders are back, the next
// pass repairs it from them, fsck is clean and the dataset reads back exactly.
public sealed partial class OperatorTestbedTests
{
    [RootFact]
    public void TheScrubberFindsADamagedReplicaAndRepairsItOnceAGoodOneIsReachable()
    {
        string frontEndServer = cube.State.Servers.Single(s => s.Address == cube.FrontEnd.Split(':')[0]).Coordinate;
        // A data chunk of "corpus" none of whose holders is the front-end's server, with its holders' files.
        var (chunk, holders) = cube.State.Servers
            .SelectMany(s => Directory.GetFiles(Path.Combine(s.DataDirectory, "chunks"), "*.meta").Select(meta => (Server: s.Coordinate, Meta: meta)))
            .Select(x => (x.Server, x.Meta, Ok: ChunkMeta.TryRead(File.ReadAllBytes(x.Meta), out var m, out _), Chunk: m))
            .Where(x => x.Ok && x.Chunk!.Dataset == "corpus" && x.Chunk.Kind == ChunkKind.Data)
            .GroupBy(x => x.Chunk!.Id)
            .Select(g => (Chunk: g.First().Chunk!, Holders: g.Select(x => (x.Server, Data: Path.ChangeExtension(x.Meta, ".data"))).ToList()))
            .First(c => c.Holders.Count == 3 && c.Holders.All(h => h.Server != frontEndServer));
        var victim = holders[0];
        var others = holders.Skip(1).Select(h => h.Server).ToList();
        long corruptBefore = ScrubCounter(victim.Server, "scrubCorrupt");
        long repairedBefore = ScrubCounter(victim.Server, "scrubRepaired");
        long unrepairableBefore = ScrubCounter(victim.Server, "scrubUnrepairable");
        output.WriteLine($"chunk {chunk.Id} on {string.Join(' ', holders.Select(h => h.Server))}; damaging {victim.Server}'s, stopping {string.Join(' ', others)}");

        Task<CliResult>[] starts = [];
        try
        {
            foreach (string other in others)
            {
                var kill = CliRunner.Run("testbed", "kill", other, "--prefix", OperatorCube.Prefix);
                Assert.True(kill.ExitCode == 0, kill.ToString());
            }
            using (var file = new FileStream(victim.Data, FileMode.Open, FileAccess.ReadWrite))
            {
                file.Position = file.Length / 2;
                int b = file.ReadByte();
                file.Position = file.Length / 2;
                file.WriteByte((byte)(b ^ 0x20));
            }
            EmulatedCube.WaitUntil(
                () => ScrubCounter(victim.Server, "scrubCorrupt") > corruptBefore && ScrubCounter(victim.Server, "scrubUnrepairable") > unrepairableBefore,
                $"{victim.Server}'s scrubber did not find its damaged replica, or repaired it with both other holders down",
                seconds: (6 * OperatorCube.ScrubIntervalSeconds) + 60);

            // fsck: the chunk has no good replica (the damaged one is known corrupt, the others' servers are silent).
            var lost = cube.Cli("fsck", "corpus", "--json");
            Assert.True(lost.ExitCode == 1, lost.ToString());
            var lostLines = lost.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries);
            Assert.Equal($"fsck: dataset 'corpus' has 1 chunk with no good replica: {chunk.Id}", Assert.Single(lostLines));
            using (var json = JsonDocument.Parse(lost.Stdout))
            {
                var root = json.RootElement;
                Assert.Equal(1, root.GetProperty("missing").GetInt64());
                Assert.Equal(1, root.GetProperty("corrupt").GetInt64());
                Assert.True(root.GetProperty("underReplicated").GetInt64() >= 1);
                Assert.Equal(others.Order(), root.GetProperty("unanswered").EnumerateArray().Select(e => e.GetString()!).Order());
                var problem = root.GetProperty("datasets")[0].GetProperty("problems").EnumerateArray()
                    .Single(p => p.GetProperty("chunk").GetString() == chunk.Id.ToString());
                var replica = Assert.Single(problem.GetProperty("replicas").EnumerateArray());
                Assert.Equal(victim.Server, replica.GetProperty("server").GetString());
                Assert.Equal("corrupt", replica.GetProperty("state").GetString());
            }
        }
        finally
        {
            // Side by side: the two may be neighbours, and a server is up only once it hears all six.
            starts = [.. others.Select(other => Task.Run(() => CliRunner.Run("testbed", "start", other, "--prefix", OperatorCube.Prefix)))];
            Task.WaitAll(starts);
        }
        Assert.All(starts, start => Assert.True(start.Result.ExitCode == 0, start.Result.ToString()));

        // The next pass re-checks the replica and repairs it from a holder that is back.
        EmulatedCube.WaitUntil(
            () => ScrubCounter(victim.Server, "scrubRepaired") > repairedBefore,
            $"{victim.Server}'s scrubber did not repair its replica once the other holders were back",
            seconds: (6 * OperatorCube.ScrubIntervalSeconds) + 60);
        Assert.True(ChunkMeta.TryRead(File.ReadAllBytes(Path.ChangeExtension(victim.Data, ".meta")), out var meta, out _));
        Assert.Equal(meta!.Checksum, Camdoop.Records.XxHash64.Hash(File.ReadAllBytes(victim.Data)));

        CliResult clean = default!;
        EmulatedCube.WaitUntil(
            () => (clean = cube.Cli("fsck", "corpus", "--json")).ExitCode == 0 && Clean(clean.Stdout),
            "fsck did not come back clean after the repair",
            seconds: 60);
        Assert.Equal("", clean.Stderr.Trim());

        string back = Path.Combine(cube.WorkDirectory, "corpus.scrubbed");
        var get = cube.Cli("get", "corpus", "--out", back);
        Assert.True(get.ExitCode == 0, get.ToString());
        Assert.True(cube.Corpus.AsSpan().SequenceEqual(File.ReadAllBytes(back)), "the dataset read back differs");
        File.Delete(back);
    }

    private long ScrubCounter(string server, string counter) =>
        cube.NodeStatusOf(server).Counters.GetValueOrDefault("chunkStore")?.GetValueOrDefault(counter) ?? 0;

    /// <summary>Every chunk on three good live replicas, none corrupt, and every server answered.</summary>
    private static bool Clean(string fsckJson)
    {
        using var json = JsonDocument.Parse(fsckJson);
        var root = json.RootElement;
        return root.GetProperty("missing").GetInt64() == 0 && root.GetProperty("underReplicated").GetInt64() == 0
            && root.GetProperty("corrupt").GetInt64() == 0 && root.GetProperty("unanswered").GetArrayLength() == 0;
    }
}
