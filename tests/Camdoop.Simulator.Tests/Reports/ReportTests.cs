using System.Xml.Linq;
using Camdoop.Experiments.Reports;

namespace Camdoop.Simulator.Tests.Reports;

public class ReportTests
{
    [Fact]
    public void SvgChartIsWellFormedXmlWithOneLinePerSeries()
    {
        var chart = new SvgLineChart { Title = "Figure 6(a) <R=1>", XLabel = "Output ratio S", YLabel = "Time (s)" };
        chart.Series.Add(new ChartSeries("Camdoop", [(0, 0.01), (0.5, 0.4), (1, 1.4)]));
        chart.Series.Add(new ChartSeries("Switch (1 Gbps)", [(0, 8.5), (1, 8.5)], Dashed: true));
        var doc = XDocument.Parse(chart.Render());
        XNamespace svg = "http://www.w3.org/2000/svg";
        Assert.Equal(2, doc.Descendants(svg + "polyline").Count());
        Assert.Single(doc.Descendants(svg + "polyline"), p => p.Attribute("stroke-dasharray") is not null);
        Assert.Contains(doc.Descendants(svg + "text"), t => t.Value == "Figure 6(a) <R=1>");
        // Markers only on measured series.
        Assert.Equal(3, doc.Descendants(svg + "circle").Count());
    }

    [Fact]
    public void LogScalePlacesDecadesEvenly()
    {
        var chart = new SvgLineChart { Title = "t", XLabel = "x", YLabel = "y" };
        chart.Series.Add(new ChartSeries("a", [(0, 1), (1, 10), (2, 100)]));
        var doc = XDocument.Parse(chart.Render());
        XNamespace svg = "http://www.w3.org/2000/svg";
        var ys = doc.Descendants(svg + "circle").Select(c => double.Parse(c.Attribute("cy")!.Value, System.Globalization.CultureInfo.InvariantCulture)).ToArray();
        Assert.Equal(ys[0] - ys[1], ys[1] - ys[2], 1);
    }

    [Fact]
    public void XTicksUseTheFormatterAndCoincidingBoundsGetDistinctDashes()
    {
        var chart = new SvgLineChart { Title = "t", XLabel = "R", YLabel = "y", XTickFormat = x => $"R{Math.Pow(2, x)}" };
        chart.Series.Add(new ChartSeries("a", [(0, 1), (3, 10)]));
        chart.Series.Add(new ChartSeries("b", [(0, 5), (3, 5)], Dashed: true));
        chart.Series.Add(new ChartSeries("c", [(0, 5), (3, 5)], Dashed: true));
        var doc = XDocument.Parse(chart.Render());
        XNamespace svg = "http://www.w3.org/2000/svg";
        Assert.Contains(doc.Descendants(svg + "text"), t => t.Value == "R8");
        var dashes = doc.Descendants(svg + "polyline").Select(p => p.Attribute("stroke-dasharray")?.Value).OfType<string>().ToList();
        Assert.Equal(2, dashes.Count);
        Assert.NotEqual(dashes[0], dashes[1]);
    }

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
    private static readonly XNamespace Svg = "http://www.w3.org/2000/svg";

    private static double Num(XElement e, string attribute) =>
        double.Parse(e.Attribute(attribute)!.Value, System.Globalization.CultureInfo.InvariantCulture);

    [Fact]
    public void ARangeUpToAnOddValueTicksAtRoundTenths()
    {
        var ticks = NiceAxis.Ticks(0, 0.4026);
        Assert.Equal([0, 0.1, 0.2, 0.3, 0.4, 0.5], ticks);
        Assert.Equal(["0.0", "0.1", "0.2", "0.3", "0.4", "0.5"], NiceAxis.Labels(ticks));
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
        Assert.Equal("10000", NiceAxis.FormatPowerOfTen(1e4));
    }

    [Fact]
    public void LineChartsLabelTheirAxesWithRoundValues()
    {
        var linear = new SvgLineChart { Title = "t", XLabel = "x", YLabel = "y", LogY = false };
        linear.Series.Add(new ChartSeries("a", [(0, 0.013), (0.2, 0.4026), (0.4, 0.1)]));
        var labels = XDocument.Parse(linear.Render()).Descendants(Svg + "text").Where(t => (string?)t.Attribute("class") == "ytick").Select(t => t.Value);
        Assert.Equal(["0.0", "0.1", "0.2", "0.3", "0.4", "0.5"], labels);

        var log = new SvgLineChart { Title = "t", XLabel = "x", YLabel = "y" };
        log.Series.Add(new ChartSeries("a", [(0, 0.00023), (1, 0.4026), (2, 3.7)]));
        labels = XDocument.Parse(log.Render()).Descendants(Svg + "text").Where(t => (string?)t.Attribute("class") == "ytick").Select(t => t.Value);
        Assert.Equal(["0.0001", "0.001", "0.01", "0.1", "1", "10"], labels);
    }

    [Fact]
    public void ApproximatePaperValuesAreRangesAndExactOnesBars()
    {
        var chart = new SvgBarChart { Title = "Figure 8", YLabel = "normalised", Categories = ["a", "b", "c"], Guide = 1 };
        chart.Series.Add(new BarSeries("measured", [1.04, 2.01, 1.08]));
        chart.Series.Add(BarSeries.Paper("paper", [PaperValue.Exact(1.07), PaperValue.About(2), PaperValue.About(1)]));
        var doc = XDocument.Parse(chart.Render());
        var ranges = doc.Descendants(Svg + "g").Where(g => (string?)g.Attribute("class") == "range").ToList();
        Assert.Equal(2, ranges.Count);
        // The range of "about 2" spans 1.8 to 2.2: its whisker is as tall as 0.4 on the axis, and no bar is drawn for it.
        var plot = doc.Root!.Elements(Svg + "rect").Single(r => (string?)r.Attribute("fill") == "none" && r.Attribute("class") is null);
        double perUnit = Num(plot, "height") / 2.5; // ticks 0 to 2.5
        var whisker = ranges[0].Elements(Svg + "line").First();
        Assert.Equal(0.4 * perUnit, Num(whisker, "y1") - Num(whisker, "y2"), 1);
        var legend = doc.Root.Elements(Svg + "rect").Single(r => (string?)r.Attribute("class") == "legend");
        var hatchedBars = doc.Root.Elements(Svg + "rect").Where(r => (string?)r.Attribute("fill") == "url(#hatch)" && Num(r, "y") < Num(legend, "y")).ToList();
        Assert.Single(hatchedBars); // the exact 1.07 only
        Assert.Contains(doc.Descendants(Svg + "text"), t => t.Value == "paper, approximate (range)");
        Assert.True(PaperValue.About(2).Approximate);
        Assert.False(PaperValue.Exact(1.07).Approximate);
    }

    public static TheoryData<int, int> LegendSizes => new() { { 1, 10 }, { 5, 40 }, { 12, 60 }, { 20, 32 }, { 3, 300 } };

    [Theory]
    [MemberData(nameof(LegendSizes))]
    public void TheLegendFitsTheDrawingBelowThePlot(int series, int nameLength)
    {
        string Name(int i) => $"series {i} " + new string((char)('a' + (i % 26)), Math.Max(0, nameLength - 10));
        var line = new SvgLineChart { Title = "Figure 6: R=1 (8x8x8, torus/switch/racks/netagg/grin, deep buffers, 64 MB a port, compute paper)", XLabel = "x", YLabel = "y" };
        var bars = new SvgBarChart { Title = "t", YLabel = "y", Categories = ["a", "b"] };
        for (int i = 0; i < series; i++)
        {
            line.Series.Add(new ChartSeries(Name(i), [(0, 1 + i), (1, 2 + i)], Dashed: i % 2 == 1));
            bars.Series.Add(new BarSeries(Name(i), [1 + i, 2 + i], Reference: i % 3 == 2));
        }
        foreach (string svg in new[] { line.Render(), bars.Render() })
        {
            var doc = XDocument.Parse(svg);
            var viewBox = doc.Root!.Attribute("viewBox")!.Value.Split(' ').Select(v => double.Parse(v, System.Globalization.CultureInfo.InvariantCulture)).ToArray();
            var legend = doc.Root.Elements(Svg + "rect").Single(r => (string?)r.Attribute("class") == "legend");
            double lx = Num(legend, "x"), ly = Num(legend, "y"), lw = Num(legend, "width"), lh = Num(legend, "height");
            Assert.True(lx >= viewBox[0] && ly >= viewBox[1] && lx + lw <= viewBox[2] && ly + lh <= viewBox[3], $"legend {lx},{ly} {lw}x{lh} outside {string.Join(' ', viewBox)}");
            // Below the plot and its axis labels, never over them.
            var plot = doc.Root.Elements(Svg + "rect").Single(r => (string?)r.Attribute("fill") == "none" && r.Attribute("class") is null);
            Assert.True(ly >= Num(plot, "y") + Num(plot, "height") + 30);
            // Every entry's text (at a generous 0.62 em a character) lies inside the box, one row apart, none overlapping.
            var texts = doc.Root.Elements(Svg + "text").Where(t => t.Attribute("y") is not null && Num(t, "y") > ly && Num(t, "y") < ly + lh).ToList();
            Assert.Equal(series, texts.Count);
            var boxes = texts.Select(t => (X: Num(t, "x"), Y: Num(t, "y"), Right: Num(t, "x") + (t.Nodes().OfType<XText>().Sum(n => n.Value.Length) * 12 * 0.62))).ToList();
            Assert.All(boxes, b => Assert.True(b.X >= lx && b.Right <= lx + lw && b.Y <= ly + lh, $"{b} outside the legend"));
            foreach (var row in boxes.GroupBy(b => b.Y))
            {
                var ordered = row.OrderBy(b => b.X).ToList();
                Assert.All(ordered.Zip(ordered.Skip(1)), p => Assert.True(p.First.Right < p.Second.X - 24, $"{p.First} overlaps {p.Second}"));
            }
            // The long names are shortened, not lost: their full name is the entry's tooltip.
            if (nameLength > 100)
            {
                Assert.All(texts, t => Assert.Equal(Name(texts.IndexOf(t)), t.Element(Svg + "title")?.Value));
            }
        }
    }

    [Fact]
    public void ALongTitleWrapsInsideTheDrawing()
    {
        var chart = new SvgLineChart { Title = string.Join(' ', Enumerable.Repeat("Figure 10: S=0, R=1", 8)), XLabel = "x", YLabel = "y" };
        chart.Series.Add(new ChartSeries("a", [(0, 1), (1, 2)]));
        var doc = XDocument.Parse(chart.Render());
        var lines = doc.Root!.Elements(Svg + "text").Where(t => (string?)t.Attribute("font-weight") == "bold").ToList();
        Assert.True(lines.Count > 1);
        Assert.All(lines, l => Assert.True(l.Value.Length * 15 * 0.62 <= 800, l.Value));
        Assert.Equal(chart.Title, doc.Root.Element(Svg + "title")!.Value);
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
