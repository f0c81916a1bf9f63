using Camdoop.Experiments;
using Camdoop.Runtime.Node;

namespace Camdoop.Simulator.Tests.Experiments;

/// <summary>The compute modes: the paper's rates, a rates file that round-trips, and bad files refused with a reason.</summary>
public sealed class ComputeModelTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-rates-").FullName;

    [Fact]
    public void ThePapersModelReducesAt315GbitsAndMergesOnFourCores()
    {
        var rates = ComputeModel.Paper.Rates;
        // The Camdoop paper, §5.3: "the reduce code path can sustain a throughput of approximately 3.15 Gbps".
        Assert.Equal(3.15e9, rates.RateOf(ComputeWork.Reduce));
        Assert.Equal(4 * 3.15e9, rates.RateOf(ComputeWork.Merge));
        Assert.Equal(4 * 3.15e9, rates.RateOf(ComputeWork.Map));
        // 9,000 bytes of reduce: 72,000 bits at 3.15 Gbit/s.
        Assert.Equal(22_857, rates.CostNs(ComputeWork.Reduce, 9_000));
        Assert.Null(ComputeModel.For(ComputeMode.Off));
        Assert.Same(ComputeModel.Paper, ComputeModel.For(ComputeMode.Paper));
    }

    [Fact]
    public void ARatesFileRoundTripsIntoACalibratedModel()
    {
        string path = Path.Combine(_directory, "sub", "rates.json");
        var written = new ComputeRatesFile
        {
            Job = "wordcount",
            MapBitsPerSecond = 1.5e9,
            MapCores = 3,
            MergeBitsPerSecond = 4.25e9,
            ReduceBitsPerSecond = 2.125e9,
            Machine = "test machine",
        };
        written.Write(path);
        Assert.Equal(written, ComputeRatesFile.Read(path));
        var model = ComputeModel.For(ComputeMode.Calibrated, path)!;
        Assert.Equal(ComputeMode.Calibrated, model.Mode);
        Assert.Equal(4.5e9, model.Rates.RateOf(ComputeWork.Map));
        Assert.Equal(2.125e9, model.Rates.RateOf(ComputeWork.Reduce));
    }

    [Theory]
    [InlineData("[1, 2]", "is not a rates file")]
    [InlineData("{\"job\": \"x\", \"mapBitsPerSecond\": 1e9, \"mapCores\": 0, \"mergeBitsPerSecond\": 1e9, \"reduceBitsPerSecond\": 1e9}", "not positive")]
    [InlineData("{\"job\": \"x\", \"mapBitsPerSecond\": -1, \"mapCores\": 1, \"mergeBitsPerSecond\": 1e9, \"reduceBitsPerSecond\": 1e9}", "not positive")]
    public void ABadRatesFileIsRefusedWithItsPath(string content, string reason)
    {
        string path = Path.Combine(_directory, "bad.json");
        File.WriteAllText(path, content);
        var error = Assert.Throws<InvalidDataException>(() => ComputeRatesFile.Read(path));
        Assert.Contains(path, error.Message, StringComparison.Ordinal);
        Assert.Contains(reason, error.Message, StringComparison.Ordinal);
        Assert.DoesNotContain('\n', error.Message);
    }

    public void Dispose() => Directory.Delete(_directory, recursive: true);
}
