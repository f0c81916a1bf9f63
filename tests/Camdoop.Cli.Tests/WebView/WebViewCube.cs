using Camdoop.Cli.Testbed;
using Camdoop.Cli.Tests.Support;
using Camdoop.MapReduce.DataGen;

namespace Camdoop.Cli.Tests.WebView;

/// <summary>A 3x3x3 testbed (prefix "cdw", subnet 220) serving the web view on its default port, with sort records stored.</summary>
public sealed class WebViewCube : EmulatedCube
{
    public const string Prefix = "cdw";

    public WebViewCube()
        : base(Prefix, 220, "--torus", "3x3x3")
    {
        var generator = new DatasetGenerator(new DatasetOptions { Kind = DatasetKind.Sort, Servers = 27, BytesPerServer = 200_000, Seed = 17 });
        Records = Enumerable.Range(0, 27).SelectMany(generator.GenerateServer).ToArray();
        SetUp(() => Put("records", Records, "--format", "records100"));
    }

    public byte[] Records { get; }

    /// <summary>Shapes every torus link to <paramref name="rate"/> (null: unshaped again).</summary>
    public void ShapeLinks(string? rate) => TestbedNetwork.Shape(State.Layout(), new LinkShaping(rate, 0, 0));
}
