using Camdoop.Experiments.Reports;

namespace Camdoop.Simulator.Tests.Reports;

public class ReportTests
{
    [Fact]
    public void CsvQuotesFieldsThatNeedIt()
    {
        var csv = new CsvTable("name", "seconds");
        csv.Add("Switch (1 Gbps, 1:4)", 1.5);
        csv.Add("say \"hi\"", 0.25);
        Assert.Equal("name,seconds\n\"Switch (1 Gbps, 1:4)\",1.5\n\"say \"\"hi\"\"\",0.25\n", csv.Render());
    }
}

public class ChartAxisTests
{
    [Fact]
    public void ARangeUpToAnOddValueTicksAtRoundTenths()
    {
        var ticks = NiceAxis.Ticks(0, 0.4026);
        Assert.Equal([0, 0.1, 0.2, 0.3, 0.4, 0.5], ticks);
        Assert.Equal(["0.0", "0.1", "0.2", "0.3", "0.4", "0.5"], NiceAxis.Labels(ticks));
    }

    [Fact]
    public void LargeTicksSeparateTheirThousands()
    {
        var ticks = NiceAxis.Ticks(0, 11_900_000);
        Assert.Equal(["0", "2,500,000", "5,000,000", "7,500,000", "10,000,000", "12,500,000"], NiceAxis.Labels(ticks));
    }

    [Theory]
    [InlineData(0.0805, 0.1)]
    [InlineData(0.3, 0.5)]
    [InlineData(2.2, 2.5)]
    [InlineData(1.0, 1.0)]
    [InlineData(0.0011, 0.002)]
    [InlineData(27.4, 50)]
    [InlineData(6, 10)]
    public void StepsAreOneTwoTwoAndAHalfOrFiveTimesAPowerOfTen(double raw, double step) =>
        Assert.Equal(step, NiceAxis.Step(raw), 12);

    [Fact]
    public void TicksCoverAnyRangeWithFewShortLabels()
    {
        var random = new Random(7);
        for (int i = 0; i < 2000; i++)
        {
            double scale = Math.Pow(10, random.Next(-6, 7));
            double lo = random.Next(3) == 0 ? 0 : random.NextDouble() * scale, hi = lo + (random.NextDouble() * scale) + 1e-12;
            var ticks = NiceAxis.Ticks(lo, hi);
            var labels = NiceAxis.Labels(ticks);
            Assert.InRange(ticks.Count, 2, 7);
            Assert.True(ticks[0] <= lo && ticks[^1] >= hi, $"[{lo}, {hi}] -> {string.Join(' ', labels)}");
            double step = ticks[1] - ticks[0];
            var mantissa = step / Math.Pow(10, Math.Floor(Math.Log10(step) + 1e-9));
            Assert.Contains([1, 2, 2.5, 5, 10], m => Math.Abs(m - mantissa) < 1e-6);
            for (int k = 0; k < ticks.Count; k++)
            {
                // A label reads back as its tick and carries no more decimals than the step needs (0.25: two).
                Assert.Equal(ticks[k], double.Parse(labels[k], System.Globalization.CultureInfo.InvariantCulture), step * 1e-6);
                int decimals = labels[k].Contains('.', StringComparison.Ordinal) ? labels[k].Length - labels[k].IndexOf('.', StringComparison.Ordinal) - 1 : 0;
                Assert.True(decimals <= Math.Max(0, -Math.Floor(Math.Log10(step) + 1e-9)) + 1, $"{labels[k]} at step {step}");
            }
            Assert.Equal(labels.Count, labels.Distinct().Count());
        }
    }

    [Fact]
    public void LogAxesTickAtPowersOfTen()
    {
        var ticks = NiceAxis.LogTicks(0.0023, 45);
        Assert.Equal(["0.001", "0.01", "0.1", "1", "10", "100"], ticks.Select(NiceAxis.FormatPowerOfTen));
        Assert.Equal("1e6", NiceAxis.FormatPowerOfTen(1e6));
        Assert.Equal("1e-5", NiceAxis.FormatPowerOfTen(1e-5));
        Assert.Equal("10,000", NiceAxis.FormatPowerOfTen(1e4));
    }

    [Fact]
    public void CsvReadsBackWhatItWrote()
    {
        var csv = new CsvTable("name", "seconds", "note");
        csv.Add("Switch (1 Gbps, 1:4)", 0.1 + 0.2, "say \"hi\"\nthere");
        csv.Add("S=0, R=1", 1e-7, "");
        var (header, rows) = CsvTable.Parse(csv.Render());
        Assert.Equal(["name", "seconds", "note"], header);
        Assert.Equal(["Switch (1 Gbps, 1:4)", (0.1 + 0.2).ToString("R", System.Globalization.CultureInfo.InvariantCulture), "say \"hi\"\nthere"], rows[0]);
        Assert.Equal(["S=0, R=1", "1E-07", ""], rows[1]);
    }
}
