using Camdoop.Cli.Tests.Support;
using Camdoop.MapReduce.DataGen;

namespace Camdoop.Cli.Tests.Limits;

/// <summary>
/// A 3x3x3 testbed of its own (prefix "cdl", subnet 219) for rate limits, with 27 MB of sort records stored
/// ("records"): enough that a shuffle limited to 10 Mbit/s per port lasts seconds.
/// </summary>
public sealed class LimitCube : EmulatedCube
{
    public const string Prefix = "cdl";

    public LimitCube()
        : base(Prefix, 219, warmUp: true, "--torus", "3x3x3") // the limit is measured on the cube's first job
    {
        var records = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Sort, Servers = 27, BytesPerServer = 1_000_000, Seed = 11 });
        Records = Enumerable.Range(0, 27).SelectMany(records.GenerateServer).ToArray();
        var text = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Text, Servers = 27, BytesPerServer = 600_000, Seed = 12 });
        Text = Enumerable.Range(0, 27).SelectMany(text.GenerateServer).ToArray();
        SetUp(() => Put("records", Records, "--format", "records100", "--chunk-size", "1MB"));
    }

    public byte[] Records { get; }

    /// <summary>16 MB of text, stored during a limited shuffle as the other service's traffic.</summary>
    public byte[] Text { get; }
}
