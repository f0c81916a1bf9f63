using Camdoop.Experiments;
using Camdoop.Runtime.Topology;
using Camdoop.Simulator.Energy;

namespace Camdoop.Simulator.Tests.Experiments;

public sealed class FigureSweepTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-sweep-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    [Fact]
    public void Figure6OnASmallCubeHasEveryPointAndThePapersOrdering()
    {
        var torus = new Torus(3, 3, 3);
        var progress = new List<SweepProgress>();
        var rows = FigureSweep.Run(Figure.Figure6, torus, new SweepOptions { Settings = new SimulationSettings { BytesPerServer = 6_000 }, OutputRatios = [0, 1], Parallelism = 2 },
            new SynchronousProgress<SweepProgress>(progress.Add));
        Assert.Equal(8, rows.Count); // 2 S x 2 R x 2 modes
        Assert.Equal(8, progress.Count);
        Assert.All(rows, r => Assert.True(r.Completed));
        foreach (var panel in new[] { "R=1", "R=27" })
        {
            var camdoop0 = rows.Single(r => r.Panel == panel && r.RequestedOutputRatio == 0 && r.Mode == "camdoop");
            var noAgg0 = rows.Single(r => r.Panel == panel && r.RequestedOutputRatio == 0 && r.Mode == "noagg");
            // At S = 0 aggregation moves far fewer bytes and finishes sooner.
            Assert.True(camdoop0.DataByteHops * 3 < noAgg0.DataByteHops, $"{panel}: {camdoop0.DataByteHops} vs {noAgg0.DataByteHops}");
            Assert.True(camdoop0.ShuffleReduceSeconds < noAgg0.ShuffleReduceSeconds);
            // At S = 1 there is nothing to aggregate: the same bytes move.
            var camdoop1 = rows.Single(r => r.Panel == panel && r.RequestedOutputRatio == 1 && r.Mode == "camdoop");
            var noAgg1 = rows.Single(r => r.Panel == panel && r.RequestedOutputRatio == 1 && r.Mode == "noagg");
            Assert.Equal(camdoop1.DataByteHops, noAgg1.DataByteHops);
            Assert.Equal(camdoop1.OutputBytes, noAgg1.OutputBytes);
        }

        string csv = Path.Combine(_directory, "figure6.csv");
        FigureSweep.WriteCsv(rows, csv);
        var lines = File.ReadAllLines(csv);
        Assert.Equal(9, lines.Length);
        Assert.StartsWith("figure,panel,requestedS,outputRatio,reduceTasks,mode,trees,shuffleReduceSeconds,switch1G,switch6G", lines[0], StringComparison.Ordinal);
        // Every row names the trees it ran on (the default family here).
        Assert.All(lines.Skip(1), line => Assert.Equal("shallow", line.Split(',')[6]));
        // Each chart as an SVG (read here) and a PNG beside it.
        var charts = FigureSweep.WriteCharts(rows, _directory).Where(p => p.EndsWith(".svg", StringComparison.Ordinal)).ToList();
        Assert.Equal(2, charts.Count);
        foreach (string path in charts)
        {
            string svg = File.ReadAllText(path);
            Assert.Contains("Camdoop (no agg.)", svg, StringComparison.Ordinal);
            Assert.Contains("Switch (1 Gbps, 1:4 oversub)", svg, StringComparison.Ordinal);
            // The first series's line, in the first colour of the palette.
            Assert.Contains("stroke=\"#1F77B4\"", svg, StringComparison.Ordinal);
        }
    }

    /// <summary>
    /// --networks torus,switch,racks: every point also runs TCP Camdoop on each switched network, on the same map
    /// outputs (the same bytes, so the same bounds), and the charts name each network's series.
    /// </summary>
    [Fact]
    public void SwitchedNetworksAddATcpCamdoopRowPerPoint()
    {
        var torus = new Torus(3, 3, 3);
        var rows = FigureSweep.Run(Figure.Figure7, torus, new SweepOptions
        {
            Settings = new SimulationSettings { BytesPerServer = 6_000 },
            ReduceTasks = [1, 27],
            Parallelism = 2,
            Networks = [Simulator.Network.NetworkKind.Torus, Simulator.Network.NetworkKind.Switch, Simulator.Network.NetworkKind.Racks],
            Tcp = new Runtime.Transport.Tcp.TcpOptions { MinRto = 1_000_000 },
        });
        Assert.Equal(16, rows.Count); // 2 S x 2 R x (2 modes + 2 networks)
        Assert.All(rows, r => Assert.True(r.Completed));
        foreach (var point in rows.GroupBy(r => (r.RequestedOutputRatio, r.ReduceTasks)))
        {
            Assert.Equal(["torus", "torus", "switch", "racks"], point.Select(r => r.Network));
            Assert.Equal(["camdoop", "noagg", "tcp", "tcp"], point.Select(r => r.Mode));
            Assert.Single(point.Select(r => r.LowerBounds).Distinct());
            Assert.Single(point.Select(r => r.IntermediateBytes).Distinct());
            // Nothing is aggregated on the way: TCP Camdoop's reducers write what noagg's do.
            Assert.Equal(point.Single(r => r.Mode == "noagg").OutputBytes, point.First(r => r.Mode == "tcp").OutputBytes);
        }
        var charts = FigureSweep.WriteCharts(rows, _directory).Where(p => p.EndsWith(".svg", StringComparison.Ordinal)).ToList();
        Assert.All(charts, path => Assert.Contains("TCP Camdoop (racks)", File.ReadAllText(path), StringComparison.Ordinal));
        var csv = FigureSweep.ToCsv(rows);
        string file = Path.Combine(_directory, "figure7.csv");
        csv.Save(file);
        Assert.EndsWith(",network", File.ReadLines(file).First(), StringComparison.Ordinal);
    }

    /// <summary>
    /// With two cores, the R = 1 runs go side by side and the first to end maps the R = N group's input while the other
    /// still runs; one core runs everything in turn. Each point must come out the same either way.
    /// </summary>
    [Fact]
    public void MappingTheNextInputWhileARunEndsChangesNoPoint()
    {
        var torus = new Torus(3, 3, 3);
        const long bytes = 6_000;
        // Room for more than the two runs side by side: the next input is mapped ahead.
        Assert.True(FigureSweep.RunsThatFitInMemory(torus.Count, torus.Count, bytes, 8 << 20) > 2);
        var sweep = new SweepOptions { Settings = new SimulationSettings { BytesPerServer = bytes }, OutputRatios = [0, 0.5, 1] };
        var ahead = FigureSweep.Run(Figure.Figure6, torus, sweep with { Parallelism = 2 });
        var inTurn = FigureSweep.Run(Figure.Figure6, torus, sweep with { Parallelism = 1 });
        Assert.Equal(12, ahead.Count);
        static object Point(SweepRow r) => (r.Panel, r.RequestedOutputRatio, r.Mode, r.ShuffleReduceSeconds, r.IntermediateBytes,
            r.OutputBytes, r.DataByteHops, r.LinkBytes, r.Events, r.Completed);
        Assert.Equal(inTurn.Select(Point), ahead.Select(Point));
    }

    /// <summary>
    /// The sweep splits each R = N input from the R = 1 one of its S instead of mapping the raw input again, ahead
    /// (two cores) or in turn (one): every R = N point must equal a run that maps its input from scratch.
    /// </summary>
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void SplittingTheRNInputFromTheR1OneChangesNoPoint(int parallelism)
    {
        var torus = new Torus(3, 3, 3);
        var sweep = new SweepOptions { Settings = new SimulationSettings { BytesPerServer = 6_000 }, OutputRatios = [0.5, 1], Parallelism = parallelism };
        var rows = FigureSweep.Run(Figure.Figure6, torus, sweep);
        var rn = rows.Where(r => r.ReduceTasks == torus.Count).ToList();
        Assert.Equal(4, rn.Count);
        foreach (var row in rn)
        {
            AssertSameAsARunAlone(torus, sweep, row);
        }
    }

    /// <summary>Runs <paramref name="row"/>'s point alone, its input mapped from scratch, and compares what was simulated.</summary>
    private static void AssertSameAsARunAlone(Torus torus, SweepOptions sweep, SweepRow row)
    {
        var alone = JobSimulation.Run(new JobSimulationOptions
        {
            Torus = torus,
            Workload = Workload.Synthetic,
            OutputRatio = row.RequestedOutputRatio,
            Settings = sweep.Settings with { BytesPerServer = row.BytesPerServer },
            ReduceTasks = row.ReduceTasks,
            Mode = row.Mode == "camdoop" ? Camdoop.MapReduce.Jobs.Control.ShuffleMode.Camdoop : Camdoop.MapReduce.Jobs.Control.ShuffleMode.NoAgg,
        });
        Assert.Equal((row.ShuffleReduceSeconds, row.IntermediateBytes, row.OutputBytes, row.DataByteHops, row.LinkBytes, row.Events),
            (alone.ShuffleReduceSeconds, alone.IntermediateBytes, alone.OutputBytes, alone.DataByteHops, alone.LinkBytes, alone.Events));
    }

    /// <summary>
    /// Figure 6 at R values other than 1 and N (a cube whose R = N run does not fit in memory): one panel per R, and
    /// every point equal to a run that maps its input from scratch. In the order given (2, 1, 4) the sweep maps R = 2
    /// and R = 1 from the raw input of their S and splits R = 4 from R = 1's.
    /// </summary>
    [Fact]
    public void Figure6TakesItsPanelsFromTheGivenReduceTasks()
    {
        var torus = new Torus(2, 2, 3);
        var sweep = new SweepOptions { Settings = new SimulationSettings { BytesPerServer = 6_000 }, OutputRatios = [0, 1], ReduceTasks = [2, 1, 4], Parallelism = 2 };
        var rows = FigureSweep.Run(Figure.Figure6, torus, sweep);
        Assert.Equal(12, rows.Count); // 2 S x 3 R x 2 modes
        Assert.Equal(["R=1", "R=2", "R=4"], rows.Select(r => r.Panel).Distinct().Order(StringComparer.Ordinal));
        Assert.All(rows, r => Assert.Equal($"R={r.ReduceTasks}", r.Panel));
        foreach (var row in rows)
        {
            Assert.True(row.Completed);
            AssertSameAsARunAlone(torus, sweep, row);
        }
        Assert.Equal(3, FigureSweep.WriteCharts(rows, _directory).Count(p => p.EndsWith(".png", StringComparison.Ordinal)));
    }

    /// <summary>
    /// Figure 10: S = 0 and R = 1 at each small input size, both modes on the same map outputs. Every point equals a
    /// run of its size alone, aggregation moves fewer bytes and ends sooner, and the CSV and chart name the sizes.
    /// </summary>
    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void Figure10RunsEverySmallInputAtS0AndR1(int parallelism)
    {
        var torus = new Torus(3, 3, 3);
        var sweep = new SweepOptions { InputSizes = [4 << 10, 12 << 10], Parallelism = parallelism };
        var rows = FigureSweep.Run(Figure.Figure10, torus, sweep);
        Assert.Equal(4, rows.Count); // 2 sizes x 2 modes
        Assert.Equal([4 << 10, 4 << 10, 12 << 10, 12 << 10], rows.Select(r => r.BytesPerServer));
        Assert.All(rows, r => Assert.Equal((nameof(Figure.Figure10), "S=0, R=1", 0.0, 1), (r.Figure, r.Panel, r.RequestedOutputRatio, r.ReduceTasks)));
        foreach (var row in rows)
        {
            Assert.True(row.Completed);
            AssertSameAsARunAlone(torus, sweep, row);
        }
        foreach (var size in rows.GroupBy(r => r.BytesPerServer))
        {
            var camdoop = size.Single(r => r.Mode == "camdoop");
            var noAgg = size.Single(r => r.Mode == "noagg");
            Assert.Equal(camdoop.OutputBytes, noAgg.OutputBytes);
            Assert.True(camdoop.DataByteHops * 3 < noAgg.DataByteHops, $"{size.Key}: {camdoop.DataByteHops} vs {noAgg.DataByteHops}");
            Assert.True(camdoop.ShuffleReduceSeconds < noAgg.ShuffleReduceSeconds);
        }
        // The larger input takes longer without aggregation.
        Assert.True(rows[3].ShuffleReduceSeconds > rows[1].ShuffleReduceSeconds);

        string csv = Path.Combine(_directory, "figure10.csv");
        FigureSweep.WriteCsv(rows, csv);
        var lines = File.ReadAllLines(csv);
        Assert.Equal(5, lines.Length);
        Assert.EndsWith(",bytesPerServer,network", lines[0], StringComparison.Ordinal);
        Assert.Equal(["4096", "4096", "12288", "12288"], lines.Skip(1).Select(l => l.Split(',')[^2]));
        Assert.All(lines.Skip(1), l => Assert.Equal("torus", l.Split(',')[^1]));
        var chart = Assert.Single(FigureSweep.WriteCharts(rows, _directory).Where(p => p.EndsWith(".svg", StringComparison.Ordinal)).ToList());
        Assert.EndsWith("figure-10-s-0-r-1.svg", chart, StringComparison.Ordinal);
        string svg = File.ReadAllText(chart);
        var texts = System.Xml.Linq.XDocument.Parse(svg).Descendants().Where(e => e.Name.LocalName == "text").Select(e => e.Value.Trim()).ToList();
        Assert.Contains("4 KB", texts);
        Assert.Contains("12 KB", texts);
        Assert.Contains("Camdoop (no agg.)", svg, StringComparison.Ordinal);
    }

    [Fact]
    public void RunsAtRNOnALargeCubeDoNotRunSideBySideWhenMemoryIsShort()
    {
        long available = GC.GetGCMemoryInfo().TotalAvailableMemoryBytes;
        const long budget = 8 << 20;
        const long bytes = 2 << 20;
        // R = 512 on 8x8x8 with 2 MB per server: the sweep holds the raw inputs and two groups' map outputs, and each
        // run adds its shuffle.
        int large = FigureSweep.RunsThatFitInMemory(512, 512, bytes, budget);
        long perRun = JobMemoryEstimate.ShuffleBytes(512, 512, budget);
        Assert.True(large >= 1);
        long held = (512 * bytes) + (2 * JobMemoryEstimate.InputBytes(512, bytes, mapOutputOnDisk: false));
        Assert.True(large == 1 || held + (large * perRun) <= available, $"{large} runs of R=512 side by side with {available} bytes available");
        if (held + (2 * perRun) > available)
        {
            Assert.Equal(1, large);
        }
        // Two such runs side by side were OOM-killed on a machine with 24 GB: the model must not fit them there.
        Assert.True(held + (2 * perRun) > 24L * 1024 * 1024 * 1024, $"two runs of R=512 estimated at {held + (2 * perRun)} bytes");
        // R = 1 on the same cube needs about 1 GB per run: more of them fit than at R = 512 when memory allows two.
        int small = FigureSweep.RunsThatFitInMemory(512, 1, bytes, budget);
        Assert.True(small >= large);
        Assert.True(small >= 2 || available < 10_000_000_000L, $"{small} runs of R=1 with {available} bytes available");
    }

    [Fact]
    public void OnlyRunsWithFewReduceTasksGoSideBySide()
    {
        const long budget = 8 << 20;
        // R = 64 on 8x8x8 fits twice in 24 GB, but one after the other on both cores is faster.
        Assert.Equal(1, FigureSweep.RunsSideBySide(512, 64, 2 << 20, budget));
        Assert.Equal(1, FigureSweep.RunsSideBySide(512, 512, 2 << 20, budget));
        Assert.Equal(FigureSweep.RunsThatFitInMemory(512, 8, 2 << 20, budget), FigureSweep.RunsSideBySide(512, 8, 2 << 20, budget));
        Assert.Equal(FigureSweep.RunsThatFitInMemory(27, 27, 2 << 20, budget), FigureSweep.RunsSideBySide(27, 27, 2 << 20, budget));
    }

    [Fact]
    public void AJobIsItsInputPlusItsShuffle()
    {
        // The sweep's side-by-side plan and sim run's refusal use one model.
        const long budget = 8 << 20;
        foreach (var (servers, r, onDisk) in new[] { (512, 1, false), (512, 512, false), (1000, 1000, true), (27, 7, false) })
        {
            long whole = JobMemoryEstimate.Bytes(servers, r, 2 << 20, onDisk, budget);
            long parts = JobMemoryEstimate.InputBytes(servers, 2 << 20, onDisk) + JobMemoryEstimate.ShuffleBytes(servers, r, budget);
            Assert.Equal(parts, whole);
            Assert.True(JobMemoryEstimate.ShuffleBytes(servers, r, budget) > 0);
        }
    }

    [Fact]
    public void Figure7VariesRAtBothEndsOfS()
    {
        var rows = FigureSweep.Run(Figure.Figure7, new Torus(3, 3, 3), new SweepOptions { Settings = new SimulationSettings { BytesPerServer = 4_000 }, ReduceTasks = [1, 27], Parallelism = 1 });
        Assert.Equal(8, rows.Count); // 2 S x 2 R x 2 modes
        Assert.Equal(new[] { "S=0", "S=1" }, rows.Select(r => r.Panel).Distinct().Order().ToArray());
        Assert.Equal(new[] { 1, 27 }, rows.Select(r => r.ReduceTasks).Distinct().Order().ToArray());
        // Switch bounds shrink as R grows at S = 1 (the busiest server receives less).
        var atOne = rows.Where(r => r.Panel == "S=1" && r.Mode == "camdoop").OrderBy(r => r.ReduceTasks).ToList();
        Assert.True(atOne[1].LowerBounds.Switch1G < atOne[0].LowerBounds.Switch1G);
        Assert.Equal(2, FigureSweep.Charts(rows).Count);
    }
}

public sealed class FigureSweepChartTests : IDisposable
{
    private readonly string _directory = Directory.CreateTempSubdirectory("camdoop-charts-").FullName;

    public void Dispose() => Directory.Delete(_directory, recursive: true);

    private static SweepRow Row(string figure, string panel, long bytes, double s, int r, string mode, double seconds, string network = "torus",
        NetworkEnergy? energy = null) =>
        new(figure, panel, bytes, s, s, r, mode, "shallow", seconds, new LowerBounds(seconds * 3, seconds / 2, seconds * 5), 1000, 10, 100, 200,
            new Distribution(1, 2, 3), true, 0.5, 0.25, 99, network, energy);

    private static IReadOnlyList<SweepRow> Figure10(double scale, bool energy = false) =>
    [
        .. new[] { 20L << 10, 200L << 10 }.SelectMany(b => new[] { ("camdoop", "torus"), ("noagg", "torus"), ("tcp", "racks") }.Select(m =>
            Row("Figure10", "S=0, R=1", b, 0, 1, m.Item1, scale * b / 1e6 * (m.Item1 == "camdoop" ? 1 : 3), m.Item2,
                energy ? new NetworkEnergy("eee", b / 1e4, new EnergyByLinkKind(b / 1e4, 0, 0), b / 1e3, 1, 1, 0.4, 7) : null))),
    ];

    [Fact]
    public void TheTwoFigure10ChartsNameTheirCubesAndVariants()
    {
        string small = Assert.Single(FigureSweep.Charts(Figure10(1), new Torus(3, 3, 3))).Title;
        string large = Assert.Single(FigureSweep.Charts(Figure10(2), new Torus(8, 8, 8), "torus/switch/racks")).Title;
        Assert.Equal("Figure 10: S=0, R=1 (3x3x3)", small);
        Assert.Equal("Figure 10: S=0, R=1 (8x8x8, torus/switch/racks)", large);
        var energy = Assert.Single(FigureSweep.EnergyCharts(Figure10(1, energy: true), new Torus(3, 3, 3), "compute paper"));
        Assert.Equal("Figure 10 energy: S=0, R=1 (3x3x3, compute paper)", energy.Title);
    }

    [Fact]
    public void Figure6OnTheTestbedsCubeIsFigure5AndKeepsItsFileNames()
    {
        IReadOnlyList<SweepRow> rows = [.. new[] { ("R=1", 1), ("R=27", 27) }.SelectMany(p => new[] { 0.0, 1 }.Select(s =>
            Row("Figure6", p.Item1, 2 << 20, s, p.Item2, "camdoop", 0.01 + s)))];
        Assert.All(FigureSweep.Charts(rows, new Torus(3, 3, 3)), c => Assert.StartsWith("Figure 5: R=", c.Title, StringComparison.Ordinal));
        Assert.All(FigureSweep.Charts(rows, new Torus(4, 4, 4)), c => Assert.StartsWith("Figure 6: R=", c.Title, StringComparison.Ordinal));
        var paths = FigureSweep.WriteCharts(rows, _directory, torus: new Torus(3, 3, 3));
        Assert.Equal(["figure-6-r-1.svg", "figure-6-r-1.png", "figure-6-r-27.svg", "figure-6-r-27.png"], paths.Select(Path.GetFileName));
        Assert.Contains(">Figure 5: R=27 (3x3x3)<", File.ReadAllText(paths[2]), StringComparison.Ordinal);
        Assert.Equal("figure-10-energy-s-0-r-1.svg", FigureSweep.FileName("Figure10", "S=0, R=1", energy: true));
    }

    /// <summary>Charts drawn again from a sweep's CSV are the charts the sweep drew, energy included.</summary>
    [Fact]
    public void ChartsFromTheCsvAreTheChartsFromTheRuns()
    {
        var rows = Figure10(1, energy: true);
        string csv = Path.Combine(_directory, "figure10.csv");
        FigureSweep.WriteCsv(rows, csv);
        var read = FigureSweep.ReadCsv(csv);
        var torus = new Torus(3, 3, 3);
        Assert.Equal(FigureSweep.Charts(rows, torus).Select(c => c.RenderSvg()), FigureSweep.Charts(read, torus).Select(c => c.RenderSvg()));
        Assert.Equal(FigureSweep.EnergyCharts(rows, torus).Select(c => c.RenderSvg()), FigureSweep.EnergyCharts(read, torus).Select(c => c.RenderSvg()));
        Assert.Equal(File.ReadAllText(csv), FigureSweep.ToCsv(read).Render());
    }
}
