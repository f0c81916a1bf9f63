using Camdoop.Cli.Tests.Support;
using Camdoop.MapReduce.DataGen;

namespace Camdoop.Cli.Tests.Metrics;

/// <summary>
/// A 3x3x3 testbed of its own (prefix "cdmx", subnet 235) serving the web view and /metrics on its default port, with
/// a text corpus stored and one word count run over it, so that the chunk stores and the shuffle have counted
/// something.
/// </summary>
public sealed class MetricsCube : EmulatedCube
{
    public const string Prefix = "cdmx";

    public MetricsCube()
        : base(Prefix, 235, "--torus", "3x3x3")
    {
        var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 27, BytesPerServer = 20_000, Seed = 23 });
        Corpus = Enumerable.Range(0, 27).SelectMany(generator.GenerateServer).ToArray();
        SetUp(() =>
        {
            Put("corpus", Corpus);
            JobId = Submit("--job", "wordcount", "--input", "corpus", "--reducers", "3", "--mode", "camdoop");
            var wait = Cli("status", JobId, "--wait");
            Assert.True(wait.ExitCode == 0, wait.ToString());
        });
    }

    public byte[] Corpus { get; }

    public string JobId { get; private set; } = "";
}
