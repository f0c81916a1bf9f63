using System.Text.Json;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.MapReduce.Jobs;
using Xunit.Abstractions;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// An operator on the real cube, through the CLI: two jobs at once both finish exact, killing one of two running jobs
/// leaves the other exact and frees the killed one on every server, `rm` deletes a dataset from every disk, the
/// commands refuse what they cannot do in one line, and a damaged replica is found by the scrubber, reported by
/// `fsck` and repaired (OperatorTestbedTests.Scrub.cs).
/// </summary>
[Collection(TestbedCollection.Name)]
public sealed partial class OperatorTestbedTests(OperatorCube cube, ITestOutputHelper output) : IClassFixture<OperatorCube>
{
    [RootFact]
    public void TwoJobsSubmittedAtOnceBothFinishWithExactOutput()
    {
        string sort = cube.Submit("--job", "sort", "--input", "records", "--reducers", "27");
        string words = cube.Submit("--job", "wordcount", "--input", "corpus", "--reducers", "3", "--mode", "noagg");

        var jobs = cube.Cli("jobs", "--json");
        Assert.True(jobs.ExitCode == 0, jobs.ToString());
        using (var listed = JsonDocument.Parse(jobs.Stdout))
        {
            var byId = listed.RootElement.GetProperty("jobs").EnumerateArray().ToDictionary(j => j.GetProperty("jobId").GetString()!);
            Assert.Equal("sort", byId[sort].GetProperty("job").GetString());
            Assert.Equal("records", byId[sort].GetProperty("input").GetString());
            Assert.Equal(27, byId[sort].GetProperty("reducers").GetInt64());
            Assert.Equal("noagg", byId[words].GetProperty("mode").GetString());
            // Newest first.
            var order = listed.RootElement.GetProperty("jobs").EnumerateArray().Select(j => j.GetProperty("jobId").GetString()).ToList();
            Assert.True(order.IndexOf(words) < order.IndexOf(sort), jobs.Stdout);
        }

        foreach (string id in new[] { sort, words })
        {
            var wait = cube.Cli("status", id, "--wait");
            Assert.True(wait.ExitCode == 0, wait.ToString());
        }
        cube.AssertOutputIsTheReference(sort, new SortJob(), cube.Records, 27);
        cube.AssertOutputIsTheReference(words, new WordCountJob(), cube.Corpus, 3);

        var table = cube.Cli("jobs");
        Assert.True(table.ExitCode == 0, table.ToString());
        output.WriteLine(table.Stdout);
        Assert.Contains(table.Stdout.Split('\n'), l => l.StartsWith(sort, StringComparison.Ordinal) && l.Contains(" done ", StringComparison.Ordinal));
    }

    [RootFact]
    public void KillingOneOfTwoRunningJobsLeavesTheOtherExactAndFreesItEverywhere()
    {
        // Slow links keep both shuffles running for several seconds.
        Camdoop.Cli.Testbed.TestbedNetwork.Shape(cube.State.Layout(), new Camdoop.Cli.Testbed.LinkShaping("2mbit", 0, 0));
        string victim;
        string survivor;
        try
        {
            victim = cube.Submit("--job", "sort", "--input", "records", "--reducers", "1", "--mode", "noagg");
            survivor = cube.Submit("--job", "wordcount", "--input", "corpus", "--reducers", "1", "--mode", "noagg");
            cube.WaitForStates(victim, survivor, "shuffling");
            Thread.Sleep(500);
            Assert.True(cube.State.Servers.Any(s => cube.NodeStatusOf(s).Counters["camdoop"]["bufferBytesRented"] > 0), "no server had shuffle buffers in use");

            var kill = cube.Cli("kill", victim);
            Assert.True(kill.ExitCode == 0, kill.ToString());
            Assert.Equal($"job {victim} killed while shuffling: 27 servers told to drop it", kill.Stdout.Trim());
            // It goes on (on a loaded machine it may have finished while the kill was being told to every server).
            Assert.Contains(cube.StateOf(survivor), new[] { "shuffling", "done" });

            var status = cube.Cli("status", victim);
            Assert.Equal(1, status.ExitCode);
            Assert.Contains($"job {victim}: sort on 'records', R=1, mode noagg, shallow trees: killed", status.Stdout, StringComparison.Ordinal);
            var again = cube.Cli("kill", victim);
            Assert.Equal(1, again.ExitCode);
            Assert.Equal($"camdoop: job {victim} has already finished (killed): nothing to kill", again.Stderr.Trim());

            var wait = cube.Cli("status", survivor, "--wait");
            Assert.True(wait.ExitCode == 0, wait.ToString());
        }
        finally
        {
            Camdoop.Cli.Testbed.TestbedNetwork.Shape(cube.State.Layout(), new Camdoop.Cli.Testbed.LinkShaping(null, 0, 0));
        }
        cube.AssertOutputIsTheReference(survivor, new WordCountJob(), cube.Corpus, 1);

        // Every server dropped the killed job: no job left, every shuffle buffer back in the pool, no file of it on disk.
        OperatorCube.WaitUntil(
            () => cube.State.Servers.All(s =>
            {
                var camdoop = cube.NodeStatusOf(s).Counters["camdoop"];
                return camdoop["jobs"] == 0 && camdoop["bufferBytesRented"] == 0;
            }),
            "a server still holds a job or shuffle buffers: " + string.Join(", ", cube.State.Servers
                .Select(s => (s.Coordinate, Counters: cube.NodeStatusOf(s).Counters["camdoop"]))
                .Where(x => x.Counters["jobs"] != 0 || x.Counters["bufferBytesRented"] != 0)
                .Select(x => $"{x.Coordinate}: {x.Counters["jobs"]} jobs, {x.Counters["bufferBytesRented"]} bytes")),
            seconds: 10);
        Assert.All(cube.State.Servers, s => Assert.False(Directory.Exists(Path.Combine(s.DataDirectory, "jobs", victim)), $"{s.Coordinate} kept the killed job's files"));
    }

    [RootFact]
    public void RmDeletesADatasetFromEveryServersDisk()
    {
        var generator = new Camdoop.MapReduce.DataGen.DatasetGenerator(new Camdoop.MapReduce.DataGen.DatasetOptions { Kind = Camdoop.MapReduce.DataGen.DatasetKind.Text, Servers = 27, BytesPerServer = 10_000, Seed = 2 });
        cube.Put("scratch", [.. Enumerable.Range(0, 27).SelectMany(generator.GenerateServer)]);
        Assert.Contains(cube.Cli("ls").Stdout.Split('\n'), l => l.StartsWith("scratch ", StringComparison.Ordinal));
        var files = cube.ChunkFilesOf("scratch");
        Assert.Equal(2 * 3 * 28, files.Count); // 27 chunks and the manifest, three replicas each, data and metadata

        var rm = cube.Cli("rm", "scratch");
        Assert.True(rm.ExitCode == 0, rm.ToString());
        Assert.StartsWith("deleted 'scratch': 84 replicas, ", rm.Stdout, StringComparison.Ordinal);
        Assert.DoesNotContain(cube.Cli("ls").Stdout.Split('\n'), l => l.StartsWith("scratch ", StringComparison.Ordinal));
        Assert.All(files, f => Assert.False(File.Exists(f), $"{f} is still on disk"));
        Assert.Empty(cube.ChunkFilesOf("scratch"));
        Assert.Contains(cube.Cli("ls").Stdout.Split('\n'), l => l.StartsWith("corpus ", StringComparison.Ordinal)); // the others stay

        // The name is free again.
        cube.Put("scratch", [.. "a line\n"u8]);
        Assert.Equal(0, cube.Cli("rm", "scratch").ExitCode);
    }

    [RootFact]
    public void OperatorCommandsRefuseWhatTheyCannotDoInOneLine()
    {
        foreach (var (args, exit, expected) in new[]
        {
            (new[] { "rm", "no-such-dataset" }, 1, "camdoop: unknown dataset 'no-such-dataset'"),
            (new[] { "kill", "0123456789abcdef" }, 1, "camdoop: unknown job 0123456789abcdef"),
            (new[] { "kill", "zz" }, 1, "camdoop: 'zz' is not a job id (16 hex digits)"),
            (new[] { "rm", "../x" }, 2, "camdoop rm: '../x' is not a valid dataset name: it contains a path separator ('/')"),
        })
        {
            var result = cube.Cli(args);
            Assert.True(result.ExitCode == exit, result.ToString());
            Assert.Equal(expected, result.Stderr.Trim());
        }
        string job = cube.Submit("--job", "wordcount", "--input", "corpus", "--reducers", "1");
        Assert.Equal(0, cube.Cli("status", job, "--wait").ExitCode);
        var late = cube.Cli("kill", job);
        Assert.Equal(1, late.ExitCode);
        Assert.Equal($"camdoop: job {job} has already finished (done): nothing to kill", late.Stderr.Trim());
        foreach (string command in new[] { "jobs", "kill", "rm" })
        {
            var help = CliRunner.Run(command, "--help");
            Assert.True(help.ExitCode == 0 && help.Stdout.Contains("--certs <DIR>", StringComparison.Ordinal), help.ToString());
        }
    }
}
