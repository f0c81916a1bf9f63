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
