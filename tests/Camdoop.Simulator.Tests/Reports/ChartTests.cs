using System.Buffers.Binary;
using System.Globalization;
using System.Text.RegularExpressions;
using System.Xml.Linq;
using Camdoop.Experiments.Reports;
using ScottPlot.Plottables;

namespace Camdoop.Simulator.Tests.Reports;

/// <summary>The charts as a reader gets them: the SVG's text and geometry, the PNG's header, the plot's model.</summary>
public sealed partial class ChartTests
{
    private static readonly XNamespace Svg = "http://www.w3.org/2000/svg";

    [Fact]
    public void TheSvgIsXmlNamingTheTitleTheAxesAndEverySeries()
    {
        var chart = new LineChart { Title = "Figure 6(a) <R=1>", XLabel = "Output ratio S", YLabel = "Time (s)" };
        chart.Series.Add(new ChartSeries("Camdoop", [(0, 0.01), (0.5, 0.4), (1, 1.4)]));
        chart.Series.Add(new ChartSeries("Switch (1 Gbps)", [(0, 8.5), (1, 8.5)], Dashed: true));
        var doc = XDocument.Parse(chart.RenderSvg());
        var texts = Texts(doc);
        Assert.Contains("Figure 6(a) <R=1>", texts);
        Assert.Equal("Figure 6(a) <R=1>", doc.Root!.Element(Svg + "title")!.Value);
        Assert.Contains("Output ratio S", texts);
        Assert.Contains("Time (s) (log scale)", texts);
        Assert.Contains("Camdoop", texts);
        Assert.Contains("Switch (1 Gbps)", texts);
        // Text never leans on an installed font: the family list ends in the generic sans-serif.
        Assert.All(doc.Descendants(Svg + "text"), t => Assert.EndsWith("sans-serif", (string?)t.Attribute("font-family") ?? "sans-serif", StringComparison.Ordinal));
    }

    [Fact]
    public void LineChartsTickAtRoundValuesOnly()
    {
        var linear = new LineChart { Title = "t", XLabel = "x", YLabel = "y", LogY = false };
        linear.Series.Add(new ChartSeries("a", [(0, 0.013), (0.2, 0.4026), (0.4, 0.1)]));
        Assert.Equal(["0", "0.0", "0.1", "0.2", "0.3", "0.4", "0.5"], NumericTexts(linear.RenderSvg()));

        var log = new LineChart { Title = "t", XLabel = "x", YLabel = "y" };
        log.Series.Add(new ChartSeries("a", [(0, 0.00023), (1, 0.4026), (2, 3.7)]));
        Assert.Equal(["0", "0.0001", "0.001", "0.01", "0.1", "1", "10", "2"], NumericTexts(log.RenderSvg()));
    }

    [Fact]
    public void LogScalePlacesDecadesEvenly()
    {
        var chart = new LineChart { Title = "t", XLabel = "x", YLabel = "y" };
        chart.Series.Add(new ChartSeries("a", [(0, 1), (1, 10), (2, 100)]));
        var doc = XDocument.Parse(chart.RenderSvg());
        // The markers in the plot area (the first clip rectangle), not the legend's below it.
        var area = doc.Descendants(Svg + "clipPath").First().Element(Svg + "rect")!;
        var ys = doc.Descendants(Svg + "ellipse").Select(e => Num(e, "cy")).Where(y => y <= Num(area, "y") + Num(area, "height")).ToArray();
        Assert.Equal(3, ys.Length);
        Assert.Equal(ys[0] - ys[1], ys[1] - ys[2], 1);
    }

    [Fact]
    public void XTicksUseTheFormatterAndBoundsAreDashedEachDifferently()
    {
        var chart = new LineChart { Title = "t", XLabel = "R", YLabel = "y", XTickFormat = x => $"R{Math.Pow(2, x)}" };
        chart.Series.Add(new ChartSeries("a", [(0, 1), (3, 10)]));
        chart.Series.Add(new ChartSeries("b", [(0, 5), (3, 5)], Dashed: true));
        chart.Series.Add(new ChartSeries("c", [(0, 5), (3, 5)], Dashed: true));
        Assert.Contains("R8", Texts(XDocument.Parse(chart.RenderSvg())));
        var lines = chart.ToPlot().GetPlottables().OfType<Scatter>().ToList();
        Assert.Equal(ScottPlot.LinePattern.Solid.Name, lines[0].LinePattern.Name);
        Assert.True(lines[0].MarkerSize > 0);
        Assert.NotEqual(ScottPlot.LinePattern.Solid.Name, lines[1].LinePattern.Name);
        Assert.NotEqual(lines[1].LinePattern.Name, lines[2].LinePattern.Name);
        Assert.All(lines.Skip(1), l => Assert.Equal(0, l.MarkerSize));
    }

    [Fact]
    public void ThePngHasTheSignatureAndTheRequestedSize()
    {
        var chart = new LineChart { Title = "t", XLabel = "x", YLabel = "y", Width = 640, Height = 400 };
        chart.Series.Add(new ChartSeries("a", [(0, 1), (1, 2)]));
        var (width, height) = PngSize(chart.RenderPng());
        Assert.Equal((640, 400), (width, height));

        var bars = new BarChart { Title = "t", YLabel = "y", Categories = ["a"] };
        bars.Series.Add(new BarSeries("a", [1]));
        Assert.Equal((Chart.DefaultWidth, Chart.DefaultHeight), PngSize(bars.RenderPng()));
    }

    [Fact]
    public void SaveWritesTheSvgAndThePngBesideIt()
    {
        string directory = Directory.CreateTempSubdirectory("camdoop-chart-").FullName;
        try
        {
            var chart = new BarChart { Title = "t", YLabel = "y", Categories = ["a"] };
            chart.Series.Add(new BarSeries("a", [1]));
            var paths = chart.Save(Path.Combine(directory, "figure8.svg"));
            Assert.Equal(["figure8.svg", "figure8.png"], paths.Select(Path.GetFileName));
            XDocument.Load(paths[0]);
            Assert.Equal((Chart.DefaultWidth, Chart.DefaultHeight), PngSize(File.ReadAllBytes(paths[1])));
        }
        finally
        {
            Directory.Delete(directory, recursive: true);
        }
    }

    [Fact]
    public void ApproximatePaperValuesAreRangesAndExactOnesBars()
    {
        var chart = new BarChart { Title = "Figure 8", YLabel = "normalised", Categories = ["a", "b", "c"], Guide = 1 };
        chart.Series.Add(new BarSeries("measured", [1.04, 2.01, 1.08]));
        chart.Series.Add(BarSeries.Paper("paper", [PaperValue.Exact(1.07), PaperValue.About(2), PaperValue.About(1)]));
        var plot = chart.ToPlot();
        // "About 2" spans 1.8 to 2.2 and "about 1" 0.9 to 1.1: bands, not bars.
        var bands = plot.GetPlottables().OfType<ScottPlot.Plottables.Rectangle>().Select(r => (Math.Round(r.Y1, 6), Math.Round(r.Y2, 6))).ToList();
        Assert.Equal([(1.8, 2.2), (0.9, 1.1)], bands);
        var bars = plot.GetPlottables().OfType<BarPlot>().ToList();
        Assert.Equal([1.04, 2.01, 1.08], bars[0].Bars.Select(b => b.Value));
        Assert.Equal([1.07], bars[1].Bars.Select(b => b.Value)); // the exact value only
        Assert.NotNull(bars[1].Bars[0].FillHatch);
        var texts = Texts(XDocument.Parse(chart.RenderSvg()));
        Assert.Contains("paper, approximate (range)", texts);
        Assert.Contains("~2", texts);
        Assert.Contains("1.07", texts);
        Assert.True(PaperValue.About(2).Approximate);
        Assert.False(PaperValue.Exact(1.07).Approximate);
    }

    public static TheoryData<int, int> LegendSizes => new() { { 1, 10 }, { 5, 40 }, { 12, 60 }, { 20, 32 }, { 3, 300 } };

    [Theory]
    [MemberData(nameof(LegendSizes))]
    public void TheLegendLiesBelowThePlotAreaInsideTheDrawing(int series, int nameLength)
    {
        string Name(int i) => $"series {i} " + new string((char)('a' + (i % 26)), Math.Max(0, nameLength - 10));
        var line = new LineChart { Title = "Figure 6: R=1 (8x8x8, torus/switch/racks/netagg/grin, deep buffers, 64 MB a port, compute paper)", XLabel = "x", YLabel = "y" };
        var bars = new BarChart { Title = "t", YLabel = "y", Categories = ["a", "b"] };
        for (int i = 0; i < series; i++)
        {
            line.Series.Add(new ChartSeries(Name(i), [(0, 1 + i), (1, 2 + i)], Dashed: i % 2 == 1));
            bars.Series.Add(new BarSeries(Name(i), [1 + i, 2 + i], Reference: i % 3 == 2));
        }
        foreach (Chart chart in new Chart[] { line, bars })
        {
            var doc = XDocument.Parse(chart.RenderSvg());
            double width = Num(doc.Root!, "width"), height = Num(doc.Root!, "height");
            // The plot area is the first clip rectangle: the data are drawn inside it.
            var area = doc.Descendants(Svg + "clipPath").First().Element(Svg + "rect")!;
            double areaBottom = Num(area, "y") + Num(area, "height");
            Assert.True(Num(area, "height") >= Chart.DefaultHeight / 2, $"plot area {Num(area, "height")} px tall");
            var entries = doc.Descendants(Svg + "text").Where(t => t.Value.Trim().StartsWith("series ", StringComparison.Ordinal)).ToList();
            Assert.Equal(series, entries.Count);
            foreach (var entry in entries)
            {
                var (x, y) = Translation(entry);
                double[] glyphs = Offsets(entry, "x");
                double left = x + glyphs[0], right = x + glyphs[^1] + 12, baseline = y + Offsets(entry, "y")[0];
                Assert.True(baseline - 12 > areaBottom, $"{entry.Value.Trim()} at {baseline} overlaps the plot area ending at {areaBottom}");
                Assert.True(left >= 0 && right <= width && baseline <= height, $"{entry.Value.Trim()} from {left} to {right} at {baseline} outside {width}x{height}");
            }
            if (nameLength > 100)
            {
                // Too long for a row: shortened with an ellipsis, not run off the drawing.
                Assert.All(entries, e => Assert.EndsWith("\u2026", e.Value.Trim(), StringComparison.Ordinal));
            }
        }
    }

    [Fact]
    public void ALongTitleWrapsInsideTheDrawing()
    {
        var chart = new LineChart { Title = string.Join(' ', Enumerable.Repeat("Figure 10: S=0, R=1", 8)), XLabel = "x", YLabel = "y" };
        chart.Series.Add(new ChartSeries("a", [(0, 1), (1, 2)]));
        var doc = XDocument.Parse(chart.RenderSvg());
        var lines = doc.Descendants(Svg + "text").Where(t => t.Value.Contains("Figure 10", StringComparison.Ordinal)).ToList();
        Assert.True(lines.Count > 1);
        Assert.All(lines, l => Assert.True(Translation(l).X + Offsets(l, "x")[0] >= 0 && Translation(l).X + Offsets(l, "x")[^1] <= Chart.DefaultWidth, l.Value));
        Assert.Equal(chart.Title, doc.Root!.Element(Svg + "title")!.Value);
    }

    private static List<string> Texts(XDocument doc) => [.. doc.Descendants(Svg + "text").Select(t => t.Value.Trim())];

    /// <summary>The texts that are numbers (the tick labels), sorted and distinct.</summary>
    private static List<string> NumericTexts(string svg) =>
        [.. Texts(XDocument.Parse(svg)).Where(t => double.TryParse(t, NumberStyles.Float, CultureInfo.InvariantCulture, out _)).Distinct().Order(StringComparer.Ordinal)];

    private static double Num(XElement e, string attribute) => double.Parse(e.Attribute(attribute)!.Value, CultureInfo.InvariantCulture);

    /// <summary>A text's position: Skia writes it as translate(x y), or as a rotation matrix for a vertical label.</summary>
    private static (double X, double Y) Translation(XElement text)
    {
        var numbers = Number().Matches((string?)text.Attribute("transform") ?? "").Select(m => double.Parse(m.Value, CultureInfo.InvariantCulture)).ToArray();
        return numbers.Length == 2 ? (numbers[0], numbers[1]) : numbers.Length == 6 ? (numbers[4], numbers[5]) : (0, 0);
    }

    /// <summary>The glyphs' offsets Skia lists in a text's x or y attribute.</summary>
    private static double[] Offsets(XElement text, string attribute) =>
        [.. Number().Matches((string?)text.Attribute(attribute) ?? "0").Select(m => double.Parse(m.Value, CultureInfo.InvariantCulture))];

    /// <summary>Width and height from the IHDR chunk, which follows the 8-byte signature and the chunk's length and type.</summary>
    private static (int Width, int Height) PngSize(byte[] png)
    {
        Assert.Equal(new byte[] { 0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A }, png[..8]);
        Assert.Equal("IHDR", System.Text.Encoding.ASCII.GetString(png, 12, 4));
        return (BinaryPrimitives.ReadInt32BigEndian(png.AsSpan(16)), BinaryPrimitives.ReadInt32BigEndian(png.AsSpan(20)));
    }

    [GeneratedRegex(@"-?\d+(\.\d+)?(e-?\d+)?")]
    private static partial Regex Number();
}
