using System.Text.Json;
using Camdoop.Cli.Commands;
using Camdoop.Cli.Tests.Support;
using Camdoop.FrontEnd.Wire;

namespace Camdoop.Cli.Tests.CommandLine;

/// <summary>How `camdoop fsck` prints a front-end's reply, and its exit code.</summary>
public class FsckCommandTests
{
    private static readonly string Lost1 = new('a', 40);
    private static readonly string Lost2 = new('b', 40);
    private static readonly string Short = new('c', 40);

    private static FsckReply Healthy() => new()
    {
        Chunks = 4,
        Replicas = 12,
        Required = 3,
        LiveServers = 27,
        Datasets = [new FsckDatasetInfo { Name = "corpus", Chunks = 4, Replicas = 12, ManifestReplicas = 3 }],
    };

    /// <summary>"wiki": two chunks lost, one short a replica, one corrupt replica; "corpus" fine; 1,1,1 silent.</summary>
    private static FsckReply Broken() => new()
    {
        Chunks = 14,
        Replicas = 35,
        UnderReplicated = 3,
        Missing = 2,
        Corrupt = 1,
        Required = 3,
        LiveServers = 26,
        Unanswered = ["1,1,1"],
        Datasets =
        [
            new FsckDatasetInfo { Name = "corpus", Chunks = 4, Replicas = 12, ManifestReplicas = 3 },
            new FsckDatasetInfo
            {
                Name = "wiki",
                Chunks = 10,
                Replicas = 23,
                UnderReplicated = 3,
                Missing = 2,
                Corrupt = 1,
                ManifestReplicas = 3,
                ProblemCount = 3,
                Problems =
                [
                    new FsckChunkInfo { Chunk = Lost1, Index = 2, Good = 0, Replicas = [new FsckReplicaInfo { Server = "1,0,0", State = "corrupt" }], Placement = ["1,0,0", "2,0,0", "1,1,0"] },
                    new FsckChunkInfo { Chunk = Lost2, Index = 7, Good = 0, Placement = ["0,2,0", "0,2,1", "0,0,0"] },
                    new FsckChunkInfo { Chunk = Short, Index = 8, Good = 2, Replicas = [new FsckReplicaInfo { Server = "0,1,0", State = "good" }, new FsckReplicaInfo { Server = "0,1,1", State = "unchecked" }], Placement = ["0,1,0", "0,1,1", "1,1,1"] },
                ],
            },
        ],
    };

    private static (int Exit, string Out, string Err) Run(FsckReply reply, bool json)
    {
        using var output = new StringWriter();
        using var error = new StringWriter();
        int exit = FsckCommand.Report(reply, json, output, error);
        return (exit, output.ToString(), error.ToString());
    }

    [Fact]
    public void AHealthyClusterExitsZeroWithATableAndNothingOnStderr()
    {
        var (exit, output, error) = Run(Healthy(), json: false);
        Assert.Equal(0, exit);
        Assert.Equal("", error);
        var lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(["DATASET", "CHUNKS", "REPLICAS", "UNDER-REPLICATED", "MISSING", "CORRUPT"], lines[0].Split(' ', StringSplitOptions.RemoveEmptyEntries));
        Assert.Equal(["corpus", "4", "12", "0", "0", "0"], lines[1].Split(' ', StringSplitOptions.RemoveEmptyEntries));
        Assert.Equal(["total", "4", "12", "0", "0", "0"], lines[2].Split(' ', StringSplitOptions.RemoveEmptyEntries));
        Assert.DoesNotContain("no answer", output, StringComparison.Ordinal);
    }

    [Fact]
    public void LostChunksExitOneWithOneLineNamingThem()
    {
        var (exit, output, error) = Run(Broken(), json: false);
        Assert.Equal(1, exit);
        Assert.Equal($"fsck: dataset 'wiki' has 2 chunks with no good replica: {Lost1}, {Lost2}\n", error.ReplaceLineEndings("\n"));
        var lines = output.Split('\n', StringSplitOptions.RemoveEmptyEntries);
        Assert.Equal(["wiki", "10", "23", "3", "2", "1"], lines[2].Split(' ', StringSplitOptions.RemoveEmptyEntries));
        Assert.Equal(["total", "14", "35", "3", "2", "1"], lines[3].Split(' ', StringSplitOptions.RemoveEmptyEntries));
        // Each problem chunk, with where its replicas are and where they belong.
        Assert.Contains(lines, l => l.StartsWith($"wiki: chunk 2 {Lost1}: 0 of 3 good (1,0,0 corrupt)", StringComparison.Ordinal) && l.EndsWith("placed on 1,0,0 2,0,0 1,1,0", StringComparison.Ordinal));
        Assert.Contains(lines, l => l.StartsWith($"wiki: chunk 7 {Lost2}: 0 of 3 good (no replica)", StringComparison.Ordinal));
        Assert.Contains(lines, l => l.StartsWith($"wiki: chunk 8 {Short}: 2 of 3 good (0,1,0 good, 0,1,1 unchecked)", StringComparison.Ordinal));
        Assert.Contains("no answer from 1,1,1", output, StringComparison.Ordinal);
    }

    [Fact]
    public void AnUnreadableManifestIsLostToo()
    {
        var reply = Healthy();
        reply.Datasets = [.. reply.Datasets, new FsckDatasetInfo { Name = "gone", Error = "no replica server is reachable" }];
        var (exit, _, error) = Run(reply, json: false);
        Assert.Equal(1, exit);
        Assert.Equal("fsck: dataset 'gone' has no readable manifest (no replica server is reachable)", error.Trim());
    }

    [Fact]
    public void JsonHasTheTotalsTheDatasetsAndTheServersThatDidNotAnswer()
    {
        var (exit, output, error) = Run(Broken(), json: true);
        Assert.Equal(1, exit);
        Assert.Single(error.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        using var json = JsonDocument.Parse(output);
        var root = json.RootElement;
        Assert.Equal(14, root.GetProperty("chunks").GetInt64());
        Assert.Equal(3, root.GetProperty("underReplicated").GetInt64());
        Assert.Equal(2, root.GetProperty("missing").GetInt64());
        Assert.Equal(1, root.GetProperty("corrupt").GetInt64());
        Assert.Equal("1,1,1", root.GetProperty("unanswered")[0].GetString());
        var wiki = root.GetProperty("datasets")[1];
        Assert.Equal("wiki", wiki.GetProperty("name").GetString());
        Assert.Equal(2, wiki.GetProperty("missing").GetInt64());
        var first = wiki.GetProperty("problems")[0];
        Assert.Equal(Lost1, first.GetProperty("chunk").GetString());
        Assert.Equal("corrupt", first.GetProperty("replicas")[0].GetProperty("state").GetString());
        Assert.Equal(3, first.GetProperty("placement").GetArrayLength());
    }

    [Fact]
    public void ANameThatIsNotADatasetNameIsAUsageError()
    {
        var result = CliRunner.Run("fsck", "../etc", "--frontend", "127.0.0.1:1");
        Assert.Equal(2, result.ExitCode);
        Assert.Contains("not a valid dataset name", result.Stderr, StringComparison.Ordinal);
    }
}
