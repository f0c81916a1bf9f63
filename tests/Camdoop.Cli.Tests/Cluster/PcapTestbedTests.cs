using System.Text.Json;
using Camdoop.Cli.Testbed;
using Camdoop.Cli.Tests.Support;
using Camdoop.Cli.Tests.Testbed;
using Camdoop.Hosting;
using Camdoop.MapReduce.DataGen;
using Camdoop.MapReduce.Jobs;
using Camdoop.MapReduce.Reference;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>A Camdoop job end to end over the pcap link driver: a small testbed whose nodes move frames through libpcap.</summary>
[Collection(TestbedCollection.Name)]
public class PcapTestbedTests
{
    private const string Prefix = "cdp";

    [Fact]
    public void AnUnknownLinkDriverIsAUsageErrorInOneLine()
    {
        var result = CliRunner.Run("testbed", "up", "--prefix", Prefix, "--link-driver", "dpdk");
        Assert.Equal(2, result.ExitCode);
        var line = Assert.Single(result.Stderr.Split('\n', StringSplitOptions.RemoveEmptyEntries));
        Assert.Contains("--link-driver must be pcap or afpacket, not 'dpdk'", line, StringComparison.Ordinal);
        Assert.Null(TestbedState.TryLoad(Prefix));
    }

    [PcapRootFact]
    public void WordCountOverPcapLinksOnA2x2x2TestbedEqualsTheReferenceAndDownLeavesNothing()
    {
        string work = Path.Combine(Path.GetTempPath(), $"camdoop-pcap-e2e-{Environment.ProcessId}");
        Directory.CreateDirectory(work);
        CliRunner.Run("testbed", "down", "--prefix", Prefix);
        try
        {
            var up = CliRunner.Run("testbed", "up", "--torus", "2x2x2", "--prefix", Prefix, "--subnet", "207", "--link-driver", "pcap", "--no-warm-up", "--json");
            Assert.True(up.ExitCode == 0, up.ToString());
            string frontEnd;
            using (var json = JsonDocument.Parse(up.Stdout))
            {
                frontEnd = json.RootElement.GetProperty("frontend").GetString()!;
                Assert.Equal("pcap", json.RootElement.GetProperty("linkDriver").GetString());
            }
            var state = TestbedState.TryLoad(Prefix)!;
            Assert.All(state.Servers, s =>
            {
                var status = NodeStatus.TryRead(s.StatusPath)!;
                Assert.All(status.Links, l => Assert.Equal("pcap", l.Driver));
            });

            var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 8, BytesPerServer = 40_000, Seed = 5 });
            var corpus = Enumerable.Range(0, 8).SelectMany(generator.GenerateServer).ToArray();
            string corpusPath = Path.Combine(work, "corpus.txt");
            File.WriteAllBytes(corpusPath, corpus);
            var put = CliRunner.Run("put", corpusPath, "--name", "corpus", "--frontend", frontEnd);
            Assert.True(put.ExitCode == 0, put.ToString());

            var submit = CliRunner.Run("submit", "--job", "wordcount", "--input", "corpus", "--reducers", "2", "--mode", "camdoop", "--wait", "--json", "--frontend", frontEnd);
            Assert.True(submit.ExitCode == 0, submit.ToString());
            string jobId;
            using (var json = JsonDocument.Parse(submit.Stdout))
            {
                Assert.Equal("done", json.RootElement.GetProperty("state").GetString());
                Assert.Equal(corpus.Length, json.RootElement.GetProperty("inputBytes").GetInt64());
                jobId = json.RootElement.GetProperty("jobId").GetString()!;
            }
            string outPath = Path.Combine(work, "wc.txt");
            var cat = CliRunner.Run("cat", jobId, "--out", outPath, "--frontend", frontEnd);
            Assert.True(cat.ExitCode == 0, cat.ToString());
            var reference = ReferenceMapReduce.Run(new WordCountJob(), [corpus], 2);
            var expected = Enumerable.Range(0, 2).SelectMany(reference.Format).ToArray();
            Assert.True(expected.AsSpan().SequenceEqual(File.ReadAllBytes(outPath)), $"job {jobId} output over pcap links differs from the reference");

            // The shuffle really crossed the pcap links: frames counted on them, none rejected.
            Thread.Sleep(1100); // status files are rewritten every second
            var statuses = state.Servers.Select(s => NodeStatus.TryRead(s.StatusPath)!).ToList();
            Assert.True(statuses.Sum(s => s.Links.Sum(l => l.FramesReceived)) > 1000);
            Assert.Equal(0, statuses.Sum(s => s.Counters["node"]["framesRejected"]));
        }
        finally
        {
            var down = CliRunner.Run("testbed", "down", "--prefix", Prefix);
            Directory.Delete(work, recursive: true);
            Assert.True(down.ExitCode == 0, down.ToString());
            Assert.DoesNotContain(TestbedNetwork.ListNamespaces(), ns => ns.StartsWith(Prefix + "-", StringComparison.Ordinal));
            Assert.Null(TestbedState.TryLoad(Prefix));
        }
    }
}
