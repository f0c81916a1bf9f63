using Camdoop.Cli.Tests.Support;
using Camdoop.MapReduce.DataGen;

namespace Camdoop.Cli.Tests.Cluster;

/// <summary>
/// A 3x3x3 emulated testbed (prefix "cde", subnet 205) with a generated text corpus put into its chunk store. Server
/// (1,1,1)'s links get a tiny kernel receive buffer, so that the kernel drops frames there and the transports must
/// recover them.
/// </summary>
public sealed class TestbedCube : EmulatedCube
{
    public const string Prefix = "cde";
    public const string LossyServer = "1,1,1";

    /// <summary>About two jumbo frames: bursts towards (1,1,1) overflow it.</summary>
    public const int TinyReceiveBuffer = 24 * 1024;

    public TestbedCube()
        : base(Prefix, 205, "--torus", "3x3x3", "--receive-buffer", $"{TinyReceiveBuffer}", "--receive-buffer-at", LossyServer)
    {
        var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 27, BytesPerServer = 60_000, Seed = 11 });
        Corpus = Enumerable.Range(0, 27).SelectMany(generator.GenerateServer).ToArray();
        CorpusPath = Path.Combine(WorkDirectory, "corpus");
        SetUp(() => Put("corpus", Corpus));
    }

    public byte[] Corpus { get; }

    public string CorpusPath { get; }
}
