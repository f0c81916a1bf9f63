using System.Globalization;
using Camdoop.Experiments;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Energy;

namespace Camdoop.Simulator.Tests.Energy;

/// <summary>A figure sweep with an energy model: every run's energy in the CSV, and an energy chart per panel.</summary>
public sealed class SweepEnergyTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-energy-sweep-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public void Figure10WithEnergyHasEnergyColumnsAndCharts()
    {
        var rows = FigureSweep.Run(Figure.Figure10, new Torus(3, 3, 3),
            new SweepOptions { Settings = new SimulationSettings { Energy = EnergyModel.Eee }, InputSizes = [4_000], Parallelism = 1 });
        Assert.Equal(2, rows.Count); // one size, two modes
        Assert.All(rows, r => Assert.Equal("eee", r.Energy!.Model));
        // Camdoop's aggregation moves fewer bytes in less time: less energy for the same job.
        var camdoop = rows.Single(r => r.Mode == "camdoop");
        var noAgg = rows.Single(r => r.Mode == "noagg");
        Assert.True(camdoop.Energy!.Joules < noAgg.Energy!.Joules, $"{camdoop.Energy.Joules} J vs {noAgg.Energy.Joules} J");

        string csv = Path.Combine(_directory, "figure10.csv");
        FigureSweep.WriteCsv(rows, csv);
        var lines = File.ReadAllLines(csv);
        var header = lines[0].Split(',');
        int joules = Array.IndexOf(header, "energyJoules");
        Assert.True(joules > 0, lines[0]);
        Assert.Contains("energyTorusJoules", header);
        Assert.Contains("lowPowerShare", header);
        // Each row's joules are its run's (no commas in the values after the panel's quoted name).
        for (int i = 0; i < rows.Count; i++)
        {
            var cells = lines[i + 1].Replace("\"S=0, R=1\"", "panel", StringComparison.Ordinal).Split(',');
            Assert.Equal(rows[i].Energy!.Joules, double.Parse(cells[joules], CultureInfo.InvariantCulture), 12);
        }

        // The time chart and the energy chart, each as SVG and PNG.
        var charts = FigureSweep.WriteCharts(rows, _directory);
        Assert.Equal(4, charts.Count);
        string energyChart = Assert.Single(charts, p => Path.GetFileName(p).Contains("energy", StringComparison.Ordinal) && p.EndsWith(".svg", StringComparison.Ordinal));
        Assert.Contains(Path.ChangeExtension(energyChart, ".png"), charts);
        string svg = File.ReadAllText(energyChart);
        Assert.Contains("Camdoop (no agg.) (eee)", svg, StringComparison.Ordinal);
        Assert.Contains("<path", svg, StringComparison.Ordinal);
    }

    [Fact]
    public void WithoutEnergyTheCsvKeepsItsColumns()
    {
        var rows = FigureSweep.Run(Figure.Figure10, new Torus(2, 2, 2), new SweepOptions { InputSizes = [2_000], Parallelism = 1 });
        string csv = Path.Combine(_directory, "plain.csv");
        FigureSweep.WriteCsv(rows, csv);
        Assert.DoesNotContain("energy", File.ReadAllLines(csv)[0], StringComparison.Ordinal);
        Assert.Single(FigureSweep.Charts(rows));
        Assert.Empty(FigureSweep.EnergyCharts(rows));
    }
}
